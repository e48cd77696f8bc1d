package acpclient

import (
	"regexp"
	"strings"
	"sync"
)

// defaultStderrBytes is how much of an agent's stderr a transport keeps.
const defaultStderrBytes = 64 << 10

// stderrTailBytes is how much of the kept stderr an error quotes.
const stderrTailBytes = 2 << 10

// ring keeps the last size bytes written to it. Agents can be chatty on
// stderr; it must be drained constantly (a full pipe blocks the agent) but
// only its end matters when explaining a failure. Its buffer grows with what
// is written, up to size, so a quiet agent costs nothing.
type ring struct {
	mu   sync.Mutex
	buf  []byte // what was written while !full; the circular buffer once full
	size int
	full bool
	pos  int // once full: where the next byte goes, the oldest byte
}

func newRing(size int) *ring {
	if size <= 0 {
		size = defaultStderrBytes
	}
	return &ring{size: size}
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if !r.full {
		if len(r.buf)+len(p) < r.size {
			r.buf = append(r.buf, p...)
			return n, nil
		}
		r.fill(p)
		return n, nil
	}
	if len(p) >= r.size {
		copy(r.buf, p[len(p)-r.size:])
		r.pos = 0
		return n, nil
	}
	k := copy(r.buf[r.pos:], p)
	copy(r.buf, p[k:])
	r.pos = (r.pos + len(p)) % r.size
	return n, nil
}

// fill turns the growing buffer into the full circular one, holding the
// last size bytes of what it had and p.
func (r *ring) fill(p []byte) {
	buf := make([]byte, r.size)
	if len(p) >= r.size {
		copy(buf, p[len(p)-r.size:])
	} else {
		keep := r.size - len(p)
		copy(buf, r.buf[len(r.buf)-keep:])
		copy(buf[keep:], p)
	}
	r.buf, r.full, r.pos = buf, true, 0
}

// String returns what the ring holds, oldest first.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return string(r.buf)
	}
	return string(r.buf[r.pos:]) + string(r.buf[:r.pos])
}

// tail returns the last n bytes of s, starting at a line boundary when one
// is near, trimmed of blank space.
func tail(s string, n int) string {
	if len(s) > n {
		s = s[len(s)-n:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/4 {
			s = s[i+1:]
		}
	}
	return strings.TrimSpace(s)
}

// secretPatterns match credentials agents tend to log.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`),
	regexp.MustCompile(`\b(sk|pk|rk|ghp|gho|ghs|github_pat|xox[abpr])[-_][A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd)["']?\s*[:=]\s*["']?)[^\s"',;]{4,}`),
}

// Redactor removes secrets from text before it is quoted in an error or a log.
type Redactor struct {
	// Values are literal secrets to mask wherever they appear, e.g. the
	// values of secret environment variables passed to the agent.
	Values []string
}

// Redact masks known secret values and common credential shapes.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		for _, v := range r.Values {
			if len(v) >= 4 {
				s = strings.ReplaceAll(s, v, "[REDACTED]")
			}
		}
	}
	for i, re := range secretPatterns {
		if i == 2 {
			s = re.ReplaceAllString(s, "${1}[REDACTED]")
			continue
		}
		s = re.ReplaceAllString(s, "[REDACTED]")
	}
	return s
}

// secretEnvValues returns the values of variables whose names suggest
// credentials.
func secretEnvValues(env []string) []string {
	var out []string
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" {
			continue
		}
		up := strings.ToUpper(name)
		for _, hint := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
			if strings.Contains(up, hint) {
				out = append(out, value)
				break
			}
		}
	}
	return out
}
