package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestNoFraming checks that every response, the page's, the API's and the
// refusals alike, forbids framing and carries the page's content policy.
func TestNoFraming(t *testing.T) {
	ts := startServer(t)
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/?token=" + ts.token, "", http.StatusOK},
		{"/app.js", "Bearer " + ts.token, http.StatusOK},
		{"/api/agents", "Bearer " + ts.token, http.StatusOK},
		{"/api/sessions/none", "Bearer " + ts.token, http.StatusNotFound},
		{"/", "", http.StatusUnauthorized},
		{"/", "Bearer nope", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("GET", ts.base+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.path, resp.StatusCode, c.want)
		}
		if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q", c.path, got)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, d := range []string{"frame-ancestors 'none'", "default-src 'self'", "script-src 'self'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %s", c.path, csp, d)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: the policy allows inline code: %q", c.path, csp)
		}
	}
}
