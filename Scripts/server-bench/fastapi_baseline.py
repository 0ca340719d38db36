"""The baseline: the server a Python developer would write instead of IAPKit's. FastAPI, Apple's
app-store-server-library verifying each signed transaction (chain to the given root, bundle id, environment), and the
verified transaction recorded once in SQLite. Run with uvicorn (2 workers), like the brief's measured baseline."""
import os
import sqlite3
import time

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

with open(os.environ["BASELINE_ROOT"], "rb") as handle:
    root = handle.read()
verifier = SignedDataVerifier([root], False, Environment.SANDBOX, os.environ.get("BASELINE_BUNDLE", "com.example.florist"))
database = sqlite3.connect(os.environ["BASELINE_DB"], check_same_thread=False, isolation_level=None)
database.execute("PRAGMA busy_timeout=5000")
# The two workers start at once, and the switch to WAL takes a lock SQLite's busy wait does not cover: the second
# worker tries again while the first holds it (the mode is kept in the file, so the first switch is the only one).
for attempt in range(100):
    try:
        database.execute("PRAGMA journal_mode=WAL")
        break
    except sqlite3.OperationalError:
        if attempt == 99:
            raise
        time.sleep(0.05)
database.execute("CREATE TABLE IF NOT EXISTS transactions (id TEXT PRIMARY KEY, original TEXT, product TEXT, jws TEXT)")
app = FastAPI()


class Body(BaseModel):
    signedTransaction: str


@app.post("/v1/transactions")
def record(body: Body):
    try:
        transaction = verifier.verify_and_decode_signed_transaction(body.signedTransaction)
    except VerificationException as error:
        raise HTTPException(status_code=422, detail=str(error.status))
    database.execute("INSERT OR IGNORE INTO transactions VALUES (?, ?, ?, ?)",
                     (transaction.transactionId, transaction.originalTransactionId, transaction.productId,
                      body.signedTransaction))
    return {"transactionId": transaction.transactionId}
