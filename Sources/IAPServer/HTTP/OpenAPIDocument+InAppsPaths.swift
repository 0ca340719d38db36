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

          /inApps/v1/messaging/image/{imageIdentifier}:
            put:
              summary: Upload a retention message image (PNG, no transparency; FULL_SIZE 3840 wide and 160-2160 high, BULLET_POINT 1024x1024)
              description: >-
                The sandbox approves an image at once; elsewhere it waits for review. The body is read up to the
                server's 4 MiB upload limit.
              security: [{ appStoreServerAPI: [] }]
              parameters:
                - { name: imageIdentifier, in: path, required: true, schema: { type: string, format: uuid } }
                - { name: imageSize, in: query, required: false, schema: { type: string, enum: [FULL_SIZE, BULLET_POINT] } }
              requestBody:
                required: true
                content: { image/png: { schema: { type: string, format: binary } } }
              responses: &messagingNoBody
                "200": { description: Done; no body. }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "403": { $ref: "#/components/responses/AppleError" }
                "404": { $ref: "#/components/responses/AppleError" }
                "409": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
            delete:
              summary: Delete an image no message uses
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: imageIdentifier, in: path, required: true, schema: { type: string, format: uuid } }]
              responses: *messagingNoBody

          /inApps/v1/messaging/image/list:
            get:
              summary: Every uploaded image with its review state and size
              security: [{ appStoreServerAPI: [] }]
              responses:
                "200":
                  description: The images, oldest first.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [imageIdentifiers]
                        properties:
                          imageIdentifiers:
                            type: array
                            items:
                              type: object
                              required: [imageIdentifier, imageState, imageSize]
                              properties:
                                imageIdentifier: { type: string, format: uuid }
                                imageState: { type: string, enum: [PENDING, APPROVED, REJECTED] }
                                imageSize: { type: string, enum: [FULL_SIZE, BULLET_POINT] }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/messaging/message/{messageIdentifier}:
            put:
              summary: Upload a retention message (header up to 66 characters, body 144, alt text 150, up to 5 bullet points of 66)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: messageIdentifier, in: path, required: true, schema: { type: string, format: uuid } }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [header, body]
                      properties:
                        header: { type: string }
                        body: { type: string }
                        image: { $ref: "#/components/schemas/RetentionMessageImage" }
                        headerPosition: { type: string, enum: [ABOVE_BODY, ABOVE_IMAGE] }
                        bulletPoints:
                          type: array
                          items:
                            type: object
                            required: [text, imageIdentifier, altText]
                            properties:
                              text: { type: string }
                              imageIdentifier: { type: string, format: uuid }
                              altText: { type: string }
              responses: *messagingNoBody
            delete:
              summary: Delete a message (and the default messages that name it)
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: messageIdentifier, in: path, required: true, schema: { type: string, format: uuid } }]
              responses: *messagingNoBody

          /inApps/v1/messaging/message/list:
            get:
              summary: Every uploaded message with its review state
              security: [{ appStoreServerAPI: [] }]
              responses:
                "200":
                  description: The messages, oldest first.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [messageIdentifiers]
                        properties:
                          messageIdentifiers:
                            type: array
                            items:
                              type: object
                              required: [messageIdentifier, messageState]
                              properties:
                                messageIdentifier: { type: string, format: uuid }
                                messageState: { type: string, enum: [PENDING, APPROVED, REJECTED] }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/messaging/default/{productId}/{locale}:
            parameters:
              - { name: productId, in: path, required: true, schema: { type: string } }
              - { name: locale, in: path, required: true, schema: { type: string } }
            put:
              summary: Make an approved message the default for an auto-renewable subscription in a locale
              security: [{ appStoreServerAPI: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [messageIdentifier]
                      properties: { messageIdentifier: { type: string, format: uuid } }
              responses: *messagingNoBody
            get:
              summary: The default message of a subscription in a locale
              security: [{ appStoreServerAPI: [] }]
              responses:
                "200":
                  description: The default message.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [messageIdentifier]
                        properties: { messageIdentifier: { type: string, format: uuid } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
            delete:
              summary: Remove the default message of a subscription in a locale
              security: [{ appStoreServerAPI: [] }]
              responses: *messagingNoBody

          /inApps/v1/messaging/realtime/url:
            put:
              summary: Set the URL the App Store calls for a retention message (https, at most 256 characters; http on loopback)
              security: [{ appStoreServerAPI: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [realtimeURL]
                      properties: { realtimeURL: { type: string } }
              responses: *messagingNoBody
            get:
              summary: The configured realtime URL
              security: [{ appStoreServerAPI: [] }]
              responses:
                "200":
                  description: The realtime URL.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [realtimeURL]
                        properties: { realtimeURL: { type: string } }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
            delete:
              summary: Forget the realtime URL
              security: [{ appStoreServerAPI: [] }]
              responses: *messagingNoBody

          /inApps/v1/messaging/performanceTest:
            post:
              summary: Start a performance test of the realtime URL for an active subscription (the server sends the requests)
              security: [{ appStoreServerAPI: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [originalTransactionId]
                      properties: { originalTransactionId: { type: string } }
              responses:
                "200":
                  description: The test's configuration and request id.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [config, requestId]
                        properties:
                          config: { $ref: "#/components/schemas/PerformanceTestConfig" }
                          requestId: { type: string, format: uuid }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }

          /inApps/v1/messaging/performanceTest/result/{requestId}:
            get:
              summary: A performance test's result so far
              security: [{ appStoreServerAPI: [] }]
              parameters: [{ name: requestId, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: The result, PENDING until every request has ended.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [config, target, result, successRate, numPending, responseTimes, failures]
                        properties:
                          config: { $ref: "#/components/schemas/PerformanceTestConfig" }
                          target: { type: string }
                          result: { type: string, enum: [PENDING, PASS, FAIL] }
                          successRate: { type: integer }
                          numPending: { type: integer }
                          responseTimes:
                            type: object
                            required: [average, p50, p90, p95, p99]
                            properties:
                              average: { type: integer }
                              p50: { type: integer }
                              p90: { type: integer }
                              p95: { type: integer }
                              p99: { type: integer }
                          failures: { type: object, additionalProperties: { type: integer } }
                "400": { $ref: "#/components/responses/AppleError" }
                "401": { $ref: "#/components/responses/AppleUnauthorized" }
                "404": { $ref: "#/components/responses/AppleError" }
                "429": { $ref: "#/components/responses/AppleRateLimited" }
        """#
}
