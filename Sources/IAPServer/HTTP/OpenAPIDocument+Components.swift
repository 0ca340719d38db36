extension OpenAPIDocument {
    /// The document's header, security schemes, parameters, schemas and error responses.
    static let components = #"""
        openapi: 3.1.0
        info:
          title: IAPKit validation server
          version: 1.0.0
          description: >-
            Verifies App Store signed data and receipts, records them once, applies App Store Server Notifications V2,
            and answers what each customer owns. Errors are JSON with a stable `code`. `/simulator` drives the local
            App Store when `iapkit serve` runs it.
        servers:
          - url: http://127.0.0.1:8080
        components:
          securitySchemes:
            apiKey:
              type: http
              scheme: bearer
              description: An API key from the configuration (`apiKeys`), or sent as `X-API-Key`.
            apiKeyHeader:
              type: apiKey
              in: header
              name: X-API-Key
            adminToken:
              type: http
              scheme: bearer
              description: The admin token, required by `/simulator` when one is configured.
            appStoreServerAPI:
              type: http
              scheme: bearer
              bearerFormat: JWT
              description: An App Store Server API token signed with one of the simulated app's keys.
          parameters:
            customerId:
              name: id
              in: path
              required: true
              description: An app account token (UUID) or an original transaction id.
              schema: { type: string }
            bundleId:
              name: bundleId
              in: query
              required: false
              description: The app, when the server serves several.
              schema: { type: string }
            account:
              name: account
              in: path
              required: true
              schema: { type: string }
          requestBodies:
            Empty:
              description: >-
                Nothing to say, sent as {} all the same: every POST, PUT and PATCH carries a JSON body, so no form or
                request a browser sends across sites without a preflight can make one.
              required: true
              content: { application/json: { schema: { type: object, maxProperties: 0 } } }
          schemas:
            Error:
              type: object
              required: [code, message]
              properties:
                code: { type: string, description: A stable code to match on. }
                message: { type: string }
                details:
                  type: array
                  description: Each failed check of a document that did not verify.
                  items:
                    type: object
                    required: [code, reason]
                    properties:
                      code: { type: string }
                      reason: { type: string }
                      field: { type: string }
            Entitlements:
              type: object
              required: [bundleId, entitledProductIds, entitlements]
              properties:
                customerId: { type: string, description: Absent only for a receipt without purchases and without token. }
                bundleId: { type: string }
                entitledProductIds: { type: array, items: { type: string } }
                entitlements:
                  type: object
                  description: >-
                    The entitlement engine's snapshot. For a long history, a consumable's history and the revoked
                    transactions list the most recent entries, after earlierEvents and earlierRevocations others that
                    the totals include; the whole history is at /v1/customers/{customerId}/transactions.
            Transactions:
              type: object
              required: [customerId, bundleId, transactions]
              properties:
                customerId: { type: string }
                bundleId: { type: string }
                next: { type: string, description: "The cursor of the next page; absent on the last." }
                transactions:
                  type: array
                  items:
                    type: object
                    required: [transactionId, originalTransactionId, productId, signedDate, document, record]
                    properties:
                      transactionId: { type: string }
                      originalTransactionId: { type: string }
                      productId: { type: string }
                      signedDate: { type: string, format: date-time }
                      appAccountToken: { type: string }
                      document: { type: string, description: The signed transaction, or the receipt's SHA-256. }
                      record: { type: object }
            Consumption:
              type: object
              required: [recorded, customerId, balance, entitlements]
              properties:
                recorded: { type: boolean, description: False when the idempotency key was seen before. }
                customerId: { type: string }
                balance: { type: integer }
                entitlements: { type: object }
            LegacyReceiptResponse:
              type: object
              required: [status]
              description: Apple's verifyReceipt answer; numbers and booleans of transactions are strings.
              properties:
                status: { type: integer, enum: [0, 21000, 21002, 21003, 21004, 21005, 21007, 21008] }
                environment: { type: string }
                receipt: { type: object }
                latest_receipt: { type: string }
                latest_receipt_info: { type: array, items: { type: object } }
                pending_renewal_info: { type: array, items: { type: object } }
                is-retryable: { type: boolean }
                iapkit_error:
                  type: object
                  properties:
                    code: { type: string }
                    message: { type: string }
            NotificationHistoryItem:
              type: object
              description: A notification the local App Store sent (signed), with its send attempts.
              required: [signedPayload, sendAttempts]
              properties:
                signedPayload: { type: string }
                sendAttempts:
                  type: array
                  items:
                    type: object
                    required: [attemptDate, sendAttemptResult]
                    properties: { attemptDate: { type: integer }, sendAttemptResult: { type: string } }
            RetentionMessageImage:
              type: object
              required: [imageIdentifier, altText]
              properties:
                imageIdentifier: { type: string, format: uuid }
                altText: { type: string }
            PerformanceTestConfig:
              type: object
              required: [maxConcurrentRequests, totalRequests, totalDuration, responseTimeThreshold, successRateThreshold]
              properties:
                maxConcurrentRequests: { type: integer }
                totalRequests: { type: integer }
                totalDuration: { type: integer }
                responseTimeThreshold: { type: integer }
                successRateThreshold: { type: integer }
            SimulatedTransaction:
              type: object
              required: [transactionId, signedTransaction]
              properties:
                transactionId: { type: string }
                originalTransactionId: { type: string }
                productId: { type: string }
                purchaseDate: { type: string, format: date-time }
                expiresDate: { type: string, format: date-time }
                revocationDate: { type: string, format: date-time }
                orderId: { type: string, description: The order id on the customer's emailed receipt. }
                signedTransaction: { type: string, description: Ready for POST /v1/transactions. }
            TransactionList:
              type: object
              required: [transactions]
              properties:
                transactions: { type: array, items: { $ref: "#/components/schemas/SimulatedTransaction" } }
            Pending:
              type: object
              required: [id, reason, accountId, productId, requestedAt]
              properties:
                id: { type: string }
                reason: { type: string, enum: [askToBuy, interrupted] }
                accountId: { type: string }
                productId: { type: string }
                requestedAt: { type: string, format: date-time }
            PurchaseResult:
              type: object
              required: [outcome]
              properties:
                outcome: { type: string, enum: [purchased, pending, userCancelled] }
                transaction: { $ref: "#/components/schemas/SimulatedTransaction" }
                pending: { $ref: "#/components/schemas/Pending" }
            SimulatedAccount:
              type: object
              required:
                [accountId, storefront, askToBuy, billingFails, deviceIds, entitledProductIds, consumablesPurchased,
                 subscriptions, transactions]
              properties:
                accountId: { type: string }
                storefront: { type: string, description: "ISO 3166-1 alpha-3, like USA." }
                askToBuy: { type: boolean }
                billingFails: { type: boolean, description: Renewals fail, as with an expired card. }
                familyId: { type: string }
                appAccountToken: { type: string, format: uuid }
                deviceIds: { type: array, items: { type: string } }
                entitledProductIds: { type: array, items: { type: string } }
                consumablesPurchased: { type: object, additionalProperties: { type: integer } }
                subscriptions: { type: array, items: { $ref: "#/components/schemas/SimulatedSubscription" } }
                transactions: { type: array, items: { $ref: "#/components/schemas/SimulatedTransaction" } }
            SimulatedSubscription:
              type: object
              required: [groupId, state, productId, expiresDate, willAutoRenew, isFamilyShared, originalTransactionId]
              properties:
                groupId: { type: string }
                groupName: { type: string }
                state: { type: string, enum: [subscribed, inGracePeriod, inBillingRetry, expired, revoked] }
                productId: { type: string }
                expiresDate: { type: string, format: date-time }
                willAutoRenew: { type: boolean }
                renewsToProductId: { type: string, description: The product the next renewal brings, while auto-renew is on. }
                gracePeriodExpiresDate: { type: string, format: date-time }
                isFamilyShared: { type: boolean }
                originalTransactionId: { type: string }
            Inspection:
              type: object
              required: [kind, valid, checks, fields, nested]
              properties:
                kind: { type: string, enum: [receipt, transaction, renewalInfo, appTransaction, notification] }
                valid: { type: boolean }
                app: { type: [string, "null"], description: The bundle id whose rules checked it; null when no app of this server matches. }
                checks:
                  type: array
                  items:
                    type: object
                    required: [name, status]
                    properties:
                      name: { type: string }
                      status: { type: string, enum: [passed, failed, skipped] }
                      code: { type: string }
                      detail: { type: string }
                chain: { type: object }
                header: { type: object }
                digest: { type: [string, "null"] }
                advice: { type: [string, "null"], description: What to configure when the server cannot check the document (an app it does not serve, a root it does not trust). }
                fields: {}
                nested: { type: array, items: { type: object } }
          responses:
            Page:
              description: An HTML page (its scripts and styles come from /assets; nothing from outside this server).
              content: { text/html: { schema: { type: string } } }
            AppleError:
              description: Apple's error body; the HTTP status is the first three digits of errorCode.
              content:
                application/json:
                  schema:
                    type: object
                    required: [errorCode, errorMessage]
                    properties: { errorCode: { type: integer }, errorMessage: { type: string } }
            AppleUnauthorized:
              description: The App Store Server API token is missing, wrong or expired (no body, as from Apple).
            AppleRateLimited:
              description: The rate limit switched on through /simulator/inapps/rate-limit is spent (4290000).
              headers: { Retry-After: { schema: { type: integer } } }
              content:
                application/json:
                  schema:
                    type: object
                    required: [errorCode, errorMessage]
                    properties: { errorCode: { type: integer }, errorMessage: { type: string } }
            BadRequest:
              description: Malformed JSON, an unknown or mistyped field, or a malformed document.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            Unauthorized:
              description: No API key (or admin token).
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            Forbidden:
              description: The key or token is not this server's.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            NotFound:
              description: No such customer, account, transaction or request.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            Conflict:
              description: The purchase belongs to another customer, or the tokens disagree.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            TooLarge:
              description: The body is past the configured limit.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            UnsupportedMediaType:
              description: The body is not application/json.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            Unprocessable:
              description: The document did not verify, is for another app, or is otherwise refused.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
            Unavailable:
              description: Storage unavailable, or a simulated outage; retry.
              content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } }
        """#
}
