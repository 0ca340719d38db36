extension OpenAPIDocument {
    /// The validation API and the operational endpoints (the simulator's control plane is in ``simulatorPaths``).
    static let paths = #"""
        paths:
          /health:
            get:
              summary: Liveness, apps served and storage counts
              responses:
                "200":
                  description: Serving.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [status, apps, storage]
                        properties:
                          status: { type: string }
                          apps: { type: array, items: { type: string } }
                          storage:
                            type: object
                            required: [transactions, notifications, customers]
                            properties:
                              transactions: { type: integer }
                              notifications: { type: integer }
                              customers: { type: integer }
                "503": { $ref: "#/components/responses/Unavailable" }
          /metrics:
            get:
              summary: Prometheus metrics
              responses:
                "200":
                  description: Prometheus text exposition.
                  content: { text/plain: { schema: { type: string } } }
          /openapi.yaml:
            get:
              summary: This document
              responses:
                "200":
                  description: OpenAPI 3.1 YAML.
                  content: { application/yaml: { schema: { type: string } } }
          /:
            get:
              summary: The home page (for people)
              responses:
                "200": { $ref: "#/components/responses/Page" }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
          /store:
            get:
              summary: The storefront page, a client of /simulator like any app
              responses:
                "200": { $ref: "#/components/responses/Page" }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
          /manager:
            get:
              summary: The transaction manager page (approve, refund, billing, clock, notifications and answers)
              responses:
                "200": { $ref: "#/components/responses/Page" }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
          /inspector:
            get:
              summary: The inspector page (decode and verify a pasted document)
              responses:
                "200": { $ref: "#/components/responses/Page" }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
          /assets/{file}:
            get:
              summary: A stylesheet or script of the pages
              parameters: [{ name: file, in: path, required: true, schema: { type: string } }]
              responses:
                "200":
                  description: The file.
                  content:
                    text/css: { schema: { type: string } }
                    text/javascript: { schema: { type: string } }
                    image/svg+xml: { schema: { type: string } }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
                "404": { $ref: "#/components/responses/NotFound" }
          /customers:
            get:
              summary: The customers page (entitlements, history and what a customer owned when)
              responses:
                "200": { $ref: "#/components/responses/Page" }
                "304": { description: Unchanged since the ETag given in If-None-Match. }
          /console/customers/{id}:
            get:
              summary: A customer as the server stores them, for the customers page
              description: >-
                Entitlements now, every stored transaction (newest first) and a timeline of what they owned when. Served
                on loopback, or beyond it only behind the admin token.
              security: [{}, { adminToken: [] }]
              parameters:
                - { name: id, in: path, required: true, schema: { type: string }, description: An app account token or an original transaction id. }
                - { name: bundleId, in: query, required: false, schema: { type: string } }
              responses:
                "200":
                  description: The customer.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [customerId, bundleId, entitledProductIds, entitlements, transactions, timeline]
                        properties:
                          customerId: { type: string }
                          bundleId: { type: string }
                          entitledProductIds: { type: array, items: { type: string } }
                          entitlements: { type: object }
                          transactions:
                            type: array
                            items:
                              type: object
                              required: [transactionId, originalTransactionId, productId, purchaseDate, ownership, source]
                              properties:
                                transactionId: { type: string }
                                originalTransactionId: { type: string }
                                productId: { type: string }
                                kind: { type: string }
                                purchaseDate: { type: string, format: date-time }
                                expiresDate: { type: string, format: date-time }
                                revocationDate: { type: string, format: date-time }
                                revocationReason: { type: string }
                                ownership: { type: string }
                                source: { type: string }
                                signedDate: { type: string, format: date-time }
                          timeline:
                            type: object
                            required: [stretches, truncated]
                            properties:
                              truncated: { type: boolean }
                              stretches:
                                type: array
                                items:
                                  type: object
                                  required: [from, entitledProductIds, gained, lost]
                                  properties:
                                    from: { type: string, format: date-time }
                                    entitledProductIds: { type: array, items: { type: string } }
                                    gained: { type: array, items: { type: string } }
                                    lost: { type: array, items: { type: string } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /console/inspect:
            post:
              summary: Decode and verify a receipt, a JWS, a notification body or a verifyReceipt body
              description: >-
                The inspector page's verification, with the rules of the app the document names. Behind the admin
                guard of /simulator (open on loopback without an admin token).
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [document]
                      additionalProperties: false
                      properties: { document: { type: string } }
              responses:
                "200":
                  description: The document's fields and the verdict of every check.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Inspection" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
          /v1/transactions:
            post:
              summary: Verify and record a signed transaction; answer the customer's entitlements
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [signedTransaction]
                      additionalProperties: false
                      properties:
                        signedTransaction: { type: string, description: Compact JWS. }
                        signedRenewalInfo: { type: string }
                        appAccountToken: { type: string, format: uuid }
              responses:
                "200":
                  description: Recorded (or already recorded).
                  content: { application/json: { schema: { $ref: "#/components/schemas/Entitlements" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "409": { $ref: "#/components/responses/Conflict" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /v1/receipts:
            post:
              summary: Verify and record an app receipt; answer the customer's entitlements
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [receiptData]
                      additionalProperties: false
                      properties:
                        receiptData: { type: string, description: The receipt, base64. }
                        appAccountToken: { type: string, format: uuid }
              responses:
                "200":
                  description: Recorded.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Entitlements" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "404": { $ref: "#/components/responses/NotFound" }
                "409": { $ref: "#/components/responses/Conflict" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /verifyReceipt:
            post:
              summary: Apple's verifyReceipt, Production endpoint (21007 sends sandbox receipts to /sandbox/verifyReceipt)
              requestBody:
                required: true
                content:
                  application/json:
                    schema: &legacyRequest
                      type: object
                      properties:
                        receipt-data: { type: string }
                        password: { type: string }
                        exclude-old-transactions: { type: boolean }
              responses: &legacyResponses
                "200":
                  description: Always 200, with Apple's status code in the body.
                  content: { application/json: { schema: { $ref: "#/components/schemas/LegacyReceiptResponse" } } }
                "413": { $ref: "#/components/responses/TooLarge" }
          /sandbox/verifyReceipt:
            post:
              summary: Apple's verifyReceipt, Sandbox endpoint (21008 for Production receipts)
              requestBody:
                required: true
                content: { application/json: { schema: *legacyRequest } }
              responses: *legacyResponses
          /v1/notifications:
            post:
              summary: App Store Server Notifications V2
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [signedPayload]
                      additionalProperties: false
                      properties:
                        signedPayload: { type: string }
              responses:
                "200":
                  description: Applied now, or seen before.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [status]
                        properties:
                          status: { type: string, enum: [applied, duplicate] }
                "400": { $ref: "#/components/responses/BadRequest" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /v1/customers/{id}/entitlements:
            get:
              summary: What the customer owns now
              security: [{ apiKey: [] }, { apiKeyHeader: [] }]
              parameters:
                - $ref: "#/components/parameters/customerId"
                - $ref: "#/components/parameters/bundleId"
              responses:
                "200":
                  description: The entitlements.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Entitlements" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /v1/customers/{id}/transactions:
            get:
              summary: The transactions stored for the customer, in id order, a page at a time
              description: >-
                Up to `limit` transactions (100 by default, at most 1,000); when more follow, `next` is the cursor to
                pass as `cursor` for the next page.
              security: [{ apiKey: [] }, { apiKeyHeader: [] }]
              parameters:
                - $ref: "#/components/parameters/customerId"
                - $ref: "#/components/parameters/bundleId"
                - { name: limit, in: query, required: false, schema: { type: integer, minimum: 1, maximum: 1000 } }
                - { name: cursor, in: query, required: false, schema: { type: string, minLength: 1, maxLength: 64 } }
              responses:
                "200":
                  description: The transactions.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Transactions" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /v1/customers/{id}/consumptions:
            post:
              summary: Record that the customer used some of a consumable (once per idempotency key)
              security: [{ apiKey: [] }, { apiKeyHeader: [] }]
              parameters:
                - $ref: "#/components/parameters/customerId"
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [productId, idempotencyKey]
                      additionalProperties: false
                      properties:
                        productId: { type: string }
                        quantity: { type: integer, minimum: 1, maximum: 1000000 }
                        idempotencyKey: { type: string, maxLength: 200 }
                        bundleId: { type: string }
              responses:
                "201":
                  description: Recorded now.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Consumption" } } }
                "200":
                  description: Recorded before under this key; nothing changed.
                  content: { application/json: { schema: { $ref: "#/components/schemas/Consumption" } } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /v1/customers/{id}/refresh:
            post:
              summary: Catch the customer up through the App Store Server API (for a server that missed notifications)
              description: >-
                Fetches the customer's whole history and subscription statuses with the app's App Store Server API key
                (app.NAME.serverApi in the configuration), verifies every document as if it had come in a notification,
                and records what is newer than what is stored.
              security: [{ apiKey: [] }, { apiKeyHeader: [] }]
              parameters:
                - $ref: "#/components/parameters/customerId"
                - $ref: "#/components/parameters/bundleId"
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses:
                "200":
                  description: What was fetched, and the entitlements after it.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [customer, bundleId, transactionsFetched, renewalsFetched, entitlements]
                        properties:
                          customer: { type: string }
                          bundleId: { type: string }
                          transactionsFetched: { type: integer }
                          renewalsFetched: { type: integer }
                          entitlements: { $ref: "#/components/schemas/Entitlements" }
                "400": { $ref: "#/components/responses/BadRequest" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "409": { description: No App Store Server API key is configured for the app, or a purchase belongs to another customer., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "502": { description: The App Store Server API refused or could not be reached., content: { application/json: { schema: { $ref: "#/components/schemas/Error" } } } }
                "503": { $ref: "#/components/responses/Unavailable" }
        """#
}
