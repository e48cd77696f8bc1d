package journal

import (
	"database/sql"
	"fmt"
	"time"
)

// timeLayout is RFC 3339 in UTC with all nine digits of nanoseconds, so
// the text is fixed-width and sorts in time order (sqlite3's date
// functions read it too).
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// timeText is a time as stored: NULL for the zero time.
func timeText(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: t.UTC().Format(timeLayout), Valid: true}
}

// parseTime reads a stored time; NULL is the zero time.
func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s.String, err)
	}
	return t.UTC(), nil
}

// boolInt is a bool as stored (SQLite has no boolean type).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
