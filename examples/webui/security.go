package main

import (
	"crypto/rand"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// cookieName is the cookie the page gets with its first load, so its own
// requests (fetch, EventSource) carry the token without it in every URL.
// Cookies are kept per host, not per port, so the name holds the port: two
// servers side by side do not overwrite each other's.
func cookieName(host string) string {
	_, port, _ := net.SplitHostPort(host)
	return "acphost_webui_" + port
}

// newToken returns a random token of 128 bits.
func newToken() string { return rand.Text() }

// guard lets a request through only when it is for this server, from a
// page of its own, with the token:
//   - the Host header names a loopback address or localhost (a page of
//     another site that rebinds its DNS name to 127.0.0.1 sends its own
//     name): else 403;
//   - the token, from the query, the cookie or an Authorization Bearer
//     header: missing 401, wrong 403;
//   - a request that changes anything (not GET or HEAD) has an Origin, if
//     any, of this server, and a JSON body (a cross-site form cannot send
//     one): else 403 or 415.
//
// A page load with the right token in its query gets the cookie.
type guard struct {
	token string
	next  http.Handler
}

func (g guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	framing(w.Header())
	if !loopbackHost(r.Host) {
		http.Error(w, "forbidden: this server answers to 127.0.0.1 and localhost only", http.StatusForbidden)
		return
	}
	given, fromQuery := requestToken(r, cookieName(r.Host))
	switch {
	case given == "":
		http.Error(w, "unauthorized: the token is missing (open the address webui printed)", http.StatusUnauthorized)
		return
	case subtle.ConstantTimeCompare([]byte(given), []byte(g.token)) != 1:
		http.Error(w, "forbidden: wrong token", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "unsupported media type: send application/json", http.StatusUnsupportedMediaType)
			return
		}
	}
	if fromQuery {
		http.SetCookie(w, &http.Cookie{Name: cookieName(r.Host), Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	g.next.ServeHTTP(w, r)
}

// requestToken returns the token a request carries and whether it came
// in the query.
func requestToken(r *http.Request, cookie string) (string, bool) {
	if t := r.URL.Query().Get("token"); t != "" {
		return t, true
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(auth), false
	}
	if c, err := r.Cookie(cookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// loopbackHost reports whether a Host header names this machine by
// localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether an Origin header is this server's, as the
// request's Host names it.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && strings.EqualFold(u.Host, host)
}

// contentPolicy lets the page load its own script, style and data only
// (it has no inline script or style), and no other site frame it.
const contentPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// framing sets the headers every response carries, refusals included: no
// page of another site may frame this one and trick clicks out of the
// user (clickjacking), and the page runs its own code only.
func framing(h http.Header) {
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", contentPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}
