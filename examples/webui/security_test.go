package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestTokenGuardsEveryRequest checks that the page, the API and the event
// stream each refuse a request without the token (401) or with a wrong one
// (403), and take it from the query, the cookie or a Bearer header.
func TestTokenGuardsEveryRequest(t *testing.T) {
	ts := startServer(t)
	paths := []string{"/", "/app.js", "/api/agents", "/api/sessions", "/api/events", "/api/agents/demo/inspector"}
	cases := []struct {
		name  string
		query string
		set   func(*http.Request)
		want  int
	}{
		{"none", "", func(*http.Request) {}, http.StatusUnauthorized},
		{"wrong query", "?token=nope", func(*http.Request) {}, http.StatusForbidden},
		{"wrong cookie", "", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: cookieName(strings.TrimPrefix(ts.base, "http://")), Value: "nope"})
		}, http.StatusForbidden},
		{"wrong bearer", "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusForbidden},
		{"prefix of the token", "?token=" + ts.token[:len(ts.token)-1], func(*http.Request) {}, http.StatusForbidden},
		{"query", "?token=" + ts.token, func(*http.Request) {}, http.StatusOK},
		{"cookie", "", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: cookieName(strings.TrimPrefix(ts.base, "http://")), Value: ts.token})
		}, http.StatusOK},
		{"bearer", "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+ts.token) }, http.StatusOK},
	}
	for _, c := range cases {
		for _, p := range paths {
			req, _ := http.NewRequest("GET", ts.base+p+c.query, nil)
			c.set(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close() // the event stream too: it answers with its status first
			if resp.StatusCode != c.want {
				t.Errorf("%s: GET %s: %d, want %d", c.name, p, resp.StatusCode, c.want)
			}
		}
	}
	// POSTs are guarded the same way.
	req, _ := http.NewRequest("POST", ts.base+"/api/sessions", strings.NewReader(`{"agent":"demo"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d, want 401", resp.StatusCode)
	}
	if list, _ := ts.host.Sessions(context.Background()); len(list) != 0 {
		t.Errorf("a refused POST opened %d sessions", len(list))
	}
}

// TestPageLoadSetsTheCookie checks that the page, loaded with the token in
// its query, gets the cookie its own requests then carry: HttpOnly and
// SameSite=Strict, so another site's page cannot send it.
func TestPageLoadSetsTheCookie(t *testing.T) {
	ts := startServer(t)
	resp, err := http.Get(ts.base + "/?token=" + ts.token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "app.js") {
		t.Fatalf("page: %d %.200s", resp.StatusCode, body)
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == cookieName(strings.TrimPrefix(ts.base, "http://")) {
			c = k
		}
	}
	if c == nil || c.Value != ts.token || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v, want the token, HttpOnly, SameSite=Strict", c)
	}
}

// TestHostHeaderIsChecked checks that a request naming another host (a
// DNS-rebinding page) is refused even with the token.
func TestHostHeaderIsChecked(t *testing.T) {
	ts := startServer(t)
	port := ts.base[strings.LastIndex(ts.base, ":"):]
	for host, want := range map[string]int{
		"evil.example" + port:     http.StatusForbidden,
		"evil.example":            http.StatusForbidden,
		"127.0.0.1.nip.io" + port: http.StatusForbidden,
		"localhost" + port:        http.StatusOK,
		"127.0.0.1" + port:        http.StatusOK,
	} {
		req, _ := http.NewRequest("GET", ts.base+"/api/agents", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+ts.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestPostsNeedOwnOriginAndJSON checks that a POST from another origin,
// or one a plain form could send, is refused even with the token.
func TestPostsNeedOwnOriginAndJSON(t *testing.T) {
	ts := startServer(t)
	cases := []struct {
		origin, contentType string
		want                int
	}{
		{"http://evil.example", "application/json", http.StatusForbidden},
		{"null", "application/json", http.StatusForbidden},
		{"https://" + strings.TrimPrefix(ts.base, "http://"), "application/json", http.StatusForbidden},
		{ts.base, "text/plain", http.StatusUnsupportedMediaType},
		{ts.base, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{ts.base, "application/json", http.StatusBadRequest}, // through the guard: the body is no policy
		{"", "application/json; charset=utf-8", http.StatusBadRequest},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", ts.base+"/api/sessions/nokey/policy", strings.NewReader(`{"mode":"yolo"}`))
		req.Header.Set("Authorization", "Bearer "+ts.token)
		req.Header.Set("Content-Type", c.contentType)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Origin %q, Content-Type %q: %d, want %d", c.origin, c.contentType, resp.StatusCode, c.want)
		}
	}
}
