extension OpenAPIDocument {
    /// The simulated Retention Messaging API (`/inApps/v1/messaging`): images, messages, default messages, the realtime
    /// URL and performance tests, at Apple's paths with Apple's codes. Every operation needs an App Store Server API
    /// token signed with one of the simulated app's keys.
    static let messagingPaths = #"""
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
