extension OpenAPIDocument {
    /// What the transaction manager page drives under `/simulator`: billing, family, clearing and deleting, the clock,
    /// and the notification feed with the server's answers (the rest of the control plane is in ``simulatorPaths``).
    static let managerPaths = #"""
          /simulator/accounts/{account}/billing-issue:
            post:
              summary: Make the account's renewals fail (a card expired) or succeed again (recovering those in retry)
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [failing]
                      additionalProperties: false
                      properties: { failing: { type: boolean } }
              responses: &accountChange
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
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/accounts/{account}/family:
            put:
              summary: Join a family group (made on first use); shareable purchases are shared both ways
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [familyId]
                      additionalProperties: false
                      properties: { familyId: { type: string, maxLength: 64 } }
              responses: *accountChange
            delete:
              summary: Leave the family; what was shared is revoked (REVOKE notifications)
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              responses: *accountChange
          /simulator/accounts/{account}/clear:
            post:
              summary: Clear every transaction of the account (Xcode's "Clear Transactions"; no notification)
              security: [{}, { adminToken: [] }]
              parameters: [{ $ref: "#/components/parameters/account" }]
              requestBody: { $ref: "#/components/requestBodies/Empty" }
              responses: *accountChange
          /simulator/transactions/{id}:
            delete:
              summary: Delete one transaction from history (Xcode's "Delete Transaction"; no notification)
              security: [{}, { adminToken: [] }]
              parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
              responses:
                "204": { description: Deleted. }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "404": { $ref: "#/components/responses/NotFound" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/clock:
            get:
              summary: The simulator's current time, and how its clock goes
              security: [{}, { adminToken: [] }]
              responses:
                "200": &clockAnswer
                  description: The time; paused and speed when the clock runs with the wall clock.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [now]
                        properties:
                          now: { type: string, format: date-time }
                          paused: { type: boolean }
                          speed: { type: number, description: Simulated seconds per wall-clock second. }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "503": { $ref: "#/components/responses/Unavailable" }
            put:
              summary: Pause or resume the running clock, or change its speed
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      properties:
                        paused: { type: boolean }
                        speed: { type: number, minimum: 0.001, maximum: 1000000 }
              responses:
                "200": *clockAnswer
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/clock/advance:
            post:
              summary: Move the simulator's clock forward (renewals, expiries and notifications happen on the way)
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [seconds]
                      additionalProperties: false
                      properties: { seconds: { type: integer, minimum: 1, maximum: 158112000 } }
              responses: &clockMove
                "200":
                  description: The new time.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [now]
                        properties: { now: { type: string, format: date-time } }
                "400": { $ref: "#/components/responses/BadRequest" }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
                "413": { $ref: "#/components/responses/TooLarge" }
                "415": { $ref: "#/components/responses/UnsupportedMediaType" }
                "422": { $ref: "#/components/responses/Unprocessable" }
                "503": { $ref: "#/components/responses/Unavailable" }
          /simulator/clock/jump:
            post:
              summary: Move the simulator's clock forward to a date (renewals, expiries and notifications happen on the way)
              security: [{}, { adminToken: [] }]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [date]
                      additionalProperties: false
                      properties: { date: { type: string, format: date-time } }
              responses: *clockMove
          /simulator/notifications:
            get:
              summary: The notifications the simulator sent, 500 at a time
              security: [{}, { adminToken: [] }]
              parameters:
                - { name: since, in: query, required: false, schema: { type: integer, minimum: 0 } }
              responses:
                "400": { $ref: "#/components/responses/BadRequest" }
                "200":
                  description: A page of notifications and the `since` of the next page.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [notifications, next]
                        properties:
                          next: { type: integer }
                          notifications:
                            type: array
                            items:
                              type: object
                              required: [index, notificationUUID, notificationType, signedDate, signedPayload]
                              properties:
                                index: { type: integer }
                                notificationUUID: { type: string }
                                notificationType: { type: string }
                                subtype: { type: string }
                                signedDate: { type: string, format: date-time }
                                accountId: { type: string }
                                transactionId: { type: string }
                                serverAnswers:
                                  type: array
                                  items:
                                    type: object
                                    required: [date, result]
                                    properties:
                                      date: { type: string, format: date-time }
                                      result: { type: string }
                                signedPayload: { type: string }
                "401": { $ref: "#/components/responses/Unauthorized" }
                "403": { $ref: "#/components/responses/Forbidden" }
        """#
}
