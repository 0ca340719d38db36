extension OpenAPIDocument {
    /// The simulated App Store Server API (`/inApps`): Apple's paths, bodies and error codes, answered by the local
    /// App Store. Every operation needs an App Store Server API token signed with one of the simulated app's keys.
    static let inAppsPaths = #"""
          /inApps/v1/transactions/{id}:
            get:
              summary: Get transaction info (Apple's path and JSON), answered by the local App Store
              description: >-
                Needs an App Store Server API token (an ES256 JWT signed with one of the simulated app's keys); a
                missing, wrong or expired token gets 401 with no body, as from Apple.
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: The signed transaction.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [signedTransactionInfo]
                        properties: { signedTransactionInfo: { type: string } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
                "500": { $ref: "#/components/responses/AppleError" }

          /inApps/v1/history/{id}:
            get:
              summary: Get transaction history v1 (deprecated by Apple; finished consumables left out), 20 a page
              security: [{ appStoreServerAPI: [] }]
              parameters: &historyParameters
                - { name: id, in: path, required: true, schema: { type: string } }
                - { name: revision, in: query, required: false, schema: { type: string } }
                - { name: sort, in: query, required: false, schema: { type: string, enum: [ASCENDING, DESCENDING] } }
                - { name: productId, in: query, required: false, schema: { type: string } }
                - { name: productType, in: query, required: false, schema: { type: string } }
                - { name: subscriptionGroupIdentifier, in: query, required: false, schema: { type: string } }
                - { name: inAppOwnershipType, in: query, required: false, schema: { type: string } }
                - { name: revoked, in: query, required: false, schema: { type: string } }
                - { name: startDate, in: query, required: false, schema: { type: string } }
                - { name: endDate, in: query, required: false, schema: { type: string } }
              responses: &historyResponses
                "200":
                  description: A page of signed transactions.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [revision, hasMore, bundleId, appAppleId, environment, signedTransactions]
                        properties:
                          revision: { type: string }
                          hasMore: { type: boolean }
                          bundleId: { type: string }
                          appAppleId: { type: integer }
                          environment: { type: string }
                          signedTransactions: { type: array, items: { type: string } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v2/history/{id}:
            get:
              summary: Get transaction history (finished consumables included), 20 a page
              security: [{ appStoreServerAPI: [] }]
              parameters: *historyParameters
              responses: *historyResponses

          /inApps/v1/subscriptions/{id}:
            get:
              summary: Get all subscription statuses of the customer, by group
              security: [{ appStoreServerAPI: [] }]
              parameters:
                - { name: id, in: path, required: true, schema: { type: string } }
                - { name: status, in: query, required: false, schema: { type: string } }
              responses:
                "200":
                  description: Each group with its subscriptions' status, latest transaction and renewal info.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [environment, bundleId, appAppleId, data]
                        properties:
                          environment: { type: string }
                          bundleId: { type: string }
                          appAppleId: { type: integer }
                          data:
                            type: array
                            items:
                              type: object
                              required: [subscriptionGroupIdentifier, lastTransactions]
                              properties:
                                subscriptionGroupIdentifier: { type: string }
                                lastTransactions:
                                  type: array
                                  items:
                                    type: object
                                    required: [status, originalTransactionId, signedTransactionInfo, signedRenewalInfo]
                                    properties:
                                      status: { type: integer }
                                      originalTransactionId: { type: string }
                                      signedTransactionInfo: { type: string }
                                      signedRenewalInfo: { type: string }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
                "500": { $ref: "#/components/responses/AppleError" }

          /inApps/v2/refund/lookup/{id}:
            get:
              summary: Get refund history, oldest refund first, 20 a page
              security: [{ appStoreServerAPI: [] }]
              parameters:
                - { name: id, in: path, required: true, schema: { type: string } }
                - { name: revision, in: query, required: false, schema: { type: string } }
              responses:
                "200":
                  description: A page of refunded transactions, signed.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [signedTransactions, revision, hasMore]
                        properties:
                          signedTransactions: { type: array, items: { type: string } }
                          revision: { type: string }
                          hasMore: { type: boolean }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/lookup/{orderId}:
            get:
              summary: Look up an order id from a customer's emailed receipt
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: orderId, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: Status 0 and the order's signed transactions, or status 1 for an unknown order.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [status, signedTransactions]
                        properties:
                          status: { type: integer, enum: [0, 1] }
                          signedTransactions: { type: array, items: { type: string } }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/subscriptions/extend/{id}:
            put:
              summary: Extend one subscription's renewal date (RENEWAL_EXTENDED follows)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [extendByDays, extendReasonCode, requestIdentifier]
                      properties:
                        extendByDays: { type: integer, minimum: 1, maximum: 90 }
                        extendReasonCode: { type: integer, enum: [0, 1, 2, 3] }
                        requestIdentifier: { type: string }
              responses:
                "200":
                  description: The new expiration date.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [originalTransactionId, success]
                        properties:
                          originalTransactionId: { type: string }
                          webOrderLineItemId: { type: [string, "null"] }
                          success: { type: boolean }
                          effectiveDate: { type: [integer, "null"] }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "403": { $ref: "#/components/responses/AppleError" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/subscriptions/extend/mass:
            post:
              summary: Extend every active subscription to a product (completed at once by the local App Store)
              security: [{ appStoreServerAPI: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [extendByDays, extendReasonCode, requestIdentifier, productId]
                      properties:
                        extendByDays: { type: integer, minimum: 1, maximum: 90 }
                        extendReasonCode: { type: integer, enum: [0, 1, 2, 3] }
                        requestIdentifier: { type: string }
                        productId: { type: string }
                        storefrontCountryCodes: { type: array, items: { type: string } }
              responses:
                "200":
                  description: The request's identifier.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [requestIdentifier]
                        properties: { requestIdentifier: { type: string } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/subscriptions/extend/mass/{productId}/{requestId}:
            get:
              summary: Get the status of a mass renewal extension
              security: [{ appStoreServerAPI: [] }]
              parameters:
                - { name: productId, in: path, required: true, schema: { type: string } }
                - { name: requestId, in: path, required: true, schema: { type: string } }
              responses:
                "200":
                  description: Where the extension stands.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [requestIdentifier, complete, succeededCount, failedCount]
                        properties:
                          requestIdentifier: { type: string }
                          complete: { type: boolean }
                          completeDate: { type: [integer, "null"] }
                          succeededCount: { type: integer }
                          failedCount: { type: integer }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v2/transactions/consumption/{id}:
            put:
              summary: Send consumption information for a refund request (ConsumptionRequest, API 1.19)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [customerConsented, sampleContentProvided, deliveryStatus]
                      properties:
                        customerConsented: { type: boolean }
                        sampleContentProvided: { type: boolean }
                        deliveryStatus: { type: string }
                        consumptionPercentage: { type: integer }
                        refundPreference: { type: string }
              responses: &consumptionResponses
                "202": { description: Accepted; no body. }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
                "500": { $ref: "#/components/responses/AppleError" }

          /inApps/v1/transactions/consumption/{id}:
            put:
              summary: Send consumption information, the V1 form (numbers for every field)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: true
                content: { application/json: { schema: { type: object } } }
              responses: *consumptionResponses

          /inApps/v1/transactions/{id}/appAccountToken:
            put:
              summary: Set the app account token of a purchase (by its original transaction id)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [appAccountToken]
                      properties: { appAccountToken: { type: string, format: uuid } }
              responses:
                "200": { description: Set; no body. }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/transactions/appTransactions/{id}:
            get:
              summary: Get the customer's app transaction, signed
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: The signed app transaction.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [signedAppTransactionInfo]
                        properties: { signedAppTransactionInfo: { type: string } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/transactions/{id}/finish:
            post:
              summary: Mark a transaction finished (API 1.20)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              responses:
                "200": { description: Finished; no body. }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/notifications/test:
            post:
              summary: Send a TEST notification through the normal delivery path
              security: [{ appStoreServerAPI: [] }]
              responses:
                "200":
                  description: The token that looks the test notification up.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [testNotificationToken]
                        properties: { testNotificationToken: { type: string } }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
                "500": { $ref: "#/components/responses/AppleError" }

          /inApps/v1/notifications/test/{token}:
            get:
              summary: Get a test notification's status
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: token, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: The signed notification and its send attempts.
                  content:
                    application/json:
                      schema: { $ref: "#/components/schemas/NotificationHistoryItem" }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/notifications/history:
            post:
              summary: Get the notification history, 20 a page (the kept notifications of the local App Store)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: paginationToken, in: query, required: false, schema: { type: string } }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [startDate, endDate]
                      properties:
                        startDate: { type: integer }
                        endDate: { type: integer }
                        notificationType: { type: string }
                        notificationSubtype: { type: string }
                        transactionId: { type: string }
                        onlyFailures: { type: boolean }
              responses:
                "200":
                  description: A page of notifications with their send attempts.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [hasMore, notificationHistory]
                        properties:
                          paginationToken: { type: string }
                          hasMore: { type: boolean }
                          notificationHistory:
                            type: array
                            items: { $ref: "#/components/schemas/NotificationHistoryItem" }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
        """#
}
