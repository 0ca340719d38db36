extension OpenAPIDocument {
    /// The simulator's control plane under `/simulator`, continuing ``paths``.
    static let simulatorPaths = #"""
          /simulator:
            get:
              summary: The local App Store's state
              security: [{}, { adminToken: [] }]
              responses:
                "200":
                  description: Clock, accounts, products, pending purchases.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [bundleId, environment, now, accounts, productIds, pendingPurchases]
                        properties:
                          bundleId: { type: string }
                          environment: { type: string }
                          now: { type: string, format: date-time }
                          accounts: { type: array, items: { type: string } }
                          productIds: { type: array, items: { type: string } }
                          pendingPurchases: { type: array, items: { $ref: "#/components/schemas/Pending" } }
                          notifications: { type: integer }
                          transactions: { type: integer }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
          /simulator/accounts:
            post:
              summary: Open an account (with one device)
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [accountId]
                      additionalProperties: false
                      properties:
                        accountId: { type: string, pattern: "^[A-Za-z0-9_-]{1,64}$" }
                        storefront: { type: string }
                        askToBuy: { type: boolean }
                        appAccountToken: { type: string, format: uuid, description: Carried by every purchase of the account. }
              responses:
                "201":
                  description: Opened.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [accountId, deviceId]
                        properties:
                          accountId: { type: string }
                          deviceId: { type: string }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
          /simulator/accounts/{account}:
            get:
              summary: An account as the simulator sees it
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              responses:
                "200":
                  description: The account.
                  content: { application/json: { schema: { $ref: "#/components/schemas/SimulatedAccount" } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
          /simulator/accounts/{account}/devices:
            post:
              summary: Sign the account in on another device
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses:
                "201":
                  description: The device.
                  content:
                    application/json:
                      schema: { type: object, required: [deviceId], properties: { deviceId: { type: string } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
          /simulator/accounts/{account}/products:
            get:
              summary: A product request, localized for the account
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: ids, in: query, required: false, schema: { type: string }, description: Comma-separated. }
              responses:
                "200":
                  description: The products.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [products]
                        properties: { products: { type: array, items: { type: object } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "422": { $ref: "#/components/responses/Unprocessable" }
          /simulator/accounts/{account}/purchases:
            post:
              summary: Buy a product as the account
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [productId]
                      additionalProperties: false
                      properties:
                        productId: { type: string }
                        deviceId: { type: string, format: uuid }
                        quantity: { type: integer, minimum: 1, maximum: 10 }
                        appAccountToken: { type: string, format: uuid }
                        interrupted: { type: boolean }
                        userCancels: { type: boolean }
                        promotionalOffer:
                          type: object
                          description: A promotional offer signed with the app's promotional-offer key.
                          required: [offerId, keyId, nonce, timestamp, signature]
                          additionalProperties: false
                          properties:
                            offerId: { type: string }
                            keyId: { type: string }
                            nonce: { type: string, format: uuid }
                            timestamp: { type: integer, minimum: 0 }
                            signature: { type: string }
                        promotionalOfferV2:
                          type: string
                          description: A promotional offer V2 signature (a JWS with aud "promotional-offer").
                        introductoryOfferEligibility:
                          type: string
                          description: >-
                            The developer's signed introductory-offer eligibility (a JWS with aud
                            "introductory-offer-eligibility"); it decides whether the introductory offer applies.
                        winBackOfferId: { type: string }
              responses:
                "201":
                  description: Purchased.
                  content: { application/json: { schema: { $ref: "#/components/schemas/PurchaseResult" } } }
                "202":
                  description: Pending (ask to buy, interrupted).
                  content: { application/json: { schema: { $ref: "#/components/schemas/PurchaseResult" } } }
                "200":
                  description: The customer cancelled.
                  content: { application/json: { schema: { $ref: "#/components/schemas/PurchaseResult" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/transactions:
            get:
              summary: The account's transactions (or only the unfinished ones)
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: unfinished, in: query, required: false, schema: { type: string, enum: ["true", "false"] } }
              responses:
                "400": { $ref: "#/components/responses/BadRequest" }
                "200":
                  description: The transactions.
                  content: { application/json: { schema: { $ref: "#/components/schemas/TransactionList" } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
          /simulator/accounts/{account}/current-entitlements:
            get:
              summary: The latest transaction of each product the account has access to now (Transaction.currentEntitlements)
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              responses:
                "200":
                  description: The transactions.
                  content: { application/json: { schema: { $ref: "#/components/schemas/TransactionList" } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
          /simulator/accounts/{account}/products/{product}/latest-transaction:
            get:
              summary: The account's latest transaction for a product (Transaction.latest(for:))
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: product, in: path, required: true, schema: { type: string } }
              responses:
                "200":
                  description: The transaction.
                  content: { application/json: { schema: { $ref: "#/components/schemas/SimulatedTransaction" } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
          /simulator/accounts/{account}/offer-codes:
            post:
              summary: Redeem an offer code as the account
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [code]
                      additionalProperties: false
                      properties: { code: { type: string } }
              responses:
                "201":
                  description: Redeemed; the transaction also goes to the account's update streams.
                  content: { application/json: { schema: { $ref: "#/components/schemas/SimulatedTransaction" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/sync:
            post:
              summary: Restore purchases (AppStore.sync)
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses:
                "200":
                  description: The transactions.
                  content: { application/json: { schema: { $ref: "#/components/schemas/TransactionList" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/receipt:
            get:
              summary: The device's app receipt
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: deviceId, in: query, required: false, schema: { type: string, format: uuid } }
              responses:
                "200":
                  description: The receipt, base64, ready for POST /v1/receipts.
                  content:
                    application/json:
                      schema: { type: object, required: [receiptData], properties: { receiptData: { type: string } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/app-transaction:
            get:
              summary: The device's signed app transaction (AppTransaction.shared)
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: deviceId, in: query, required: false, schema: { type: string, format: uuid } }
              responses:
                "200":
                  description: A compact JWS.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [signedAppTransaction]
                        properties: { signedAppTransaction: { type: string } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/updates:
            get:
              summary: The account's transaction updates as server-sent events (Transaction.updates)
              description: >-
                The unfinished transactions first, then each transaction the store makes or changes for the account,
                as `event: transaction`, `id:` the transaction id and `data:` the signed transaction. An idle stream
                sends a comment every 15 seconds. The stream stays open until the client leaves or the server stops.
              security: [{}, { adminToken: [] }]
              parameters:
                - $ref: "#/components/parameters/account"
                - { name: deviceId, in: query, required: false, schema: { type: string, format: uuid } }
              responses:
                "200":
                  description: An event stream.
                  content: { text/event-stream: { schema: { type: string } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
          /simulator/accounts/{account}/renewal-info:
            get:
              summary: The signed renewal info of each subscription the account sees
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              responses:
                "200":
                  description: Compact JWS documents.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [signedRenewalInfo]
                        properties: { signedRenewalInfo: { type: array, items: { type: string } } }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/auto-renew:
            post:
              summary: Turn a subscription group's auto-renew on or off
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [groupId, enabled]
                      additionalProperties: false
                      properties:
                        groupId: { type: string }
                        enabled: { type: boolean }
              responses:
                "200":
                  description: The account after the change.
                  content: { application/json: { schema: { $ref: "#/components/schemas/SimulatedAccount" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
          /simulator/transactions/{id}/finish:
            post:
              summary: Finish a transaction (the app delivered it)
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses: &simulatorAction
                "200":
                  description: Done.
                  content: { application/json: { schema: { type: object } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/transactions/{id}/refund:
            post:
              summary: Refund a transaction (all, or a percentage)
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: false
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      properties: { percentage: { type: integer, minimum: 1, maximum: 100 } }
              responses: *simulatorAction
          /simulator/transactions/{id}/refund-request:
            post:
              summary: The customer asks for a refund (beginRefundRequest); Apple decides later
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: false
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      properties: { reason: { type: string } }
              responses:
                "202":
                  description: Requested; a CONSUMPTION_REQUEST notification goes to the server.
                  content: { application/json: { schema: { type: object } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/pending/{id}/approve:
            post:
              summary: Approve an ask-to-buy or interrupted purchase
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses:
                "201":
                  description: Purchased.
                  content: { application/json: { schema: { $ref: "#/components/schemas/PurchaseResult" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/pending/{id}/decline:
            post:
              summary: Decline an ask-to-buy or interrupted purchase
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses: *simulatorAction
          /simulator/inapps/rate-limit:
            put:
              summary: Switch on a rate limit for the simulated App Store Server API (/inApps), to exercise a client's retries
              description: >-
                At most `requests` calls in each window of `windowSeconds`; past it, /inApps answers 429 with Apple's
                4290000 and a Retry-After of the seconds left in the window.
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [requests, windowSeconds]
                      additionalProperties: false
                      properties:
                        requests: { type: integer, minimum: 0, maximum: 1000000 }
                        windowSeconds: { type: integer, minimum: 1, maximum: 3600 }
              responses:
                "200":
                  description: The limit now in force.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [requests, windowSeconds]
                        properties: { requests: { type: integer }, windowSeconds: { type: integer } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
            delete:
              summary: Switch the simulated App Store Server API's rate limit off
              security: [{}, { adminToken: [] }]
              responses:
                "204": { description: The limit is off. }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
        """#
}
