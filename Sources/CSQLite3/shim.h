// The system's SQLite (Debian: libsqlite3-dev; macOS: the SDK's), for the server's SQLite storage.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast Swift cannot import: binds that copy the text before returning.
static inline int iapkit_sqlite3_bind_text_copied(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
