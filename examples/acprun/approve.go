package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"

	"github.com/acphost/acphost/bridge"
)

// Approval policies of --approve.
const (
	approveAsk    = "ask"
	approveAllow  = "allow"
	approveReject = "reject"
)

// Decisions reported for a permission request.
const (
	decisionAllow     = "allow"
	decisionReject    = "reject"
	decisionCancelled = "cancelled"
)

// lineReader reads stdin line by line on one goroutine, started on first
// use, so a question can stop waiting when its request is settled some
// other way (Ctrl-C, the agent withdrawing it). The goroutine lives as long
// as the process: a read from a terminal cannot be interrupted.
type lineReader struct {
	in    io.Reader
	once  sync.Once
	lines chan string // closed at end of input
}

func (l *lineReader) next() <-chan string {
	l.once.Do(func() {
		l.lines = make(chan string)
		go func() {
			defer close(l.lines)
			sc := bufio.NewScanner(l.in)
			for sc.Scan() {
				l.lines <- sc.Text()
			}
		}()
	})
	return l.lines
}

// approver answers permission requests under --approve.
type approver struct {
	policy string
	prompt io.Writer // where questions go (stderr)
	stdin  *lineReader
	colors palette
}

// decide answers req and says how. With "ask" it asks on the prompt writer
// and waits for a line, or for the request to be settled elsewhere.
func (a *approver) decide(req *bridge.PermissionRequest, title string) string {
	allow := a.policy == approveAllow
	if a.policy == approveAsk {
		fmt.Fprintf(a.prompt, "%s %s [y/N] ", a.colors.yellow("?"), a.colors.bold("Allow "+title+"?"))
		select {
		case line, ok := <-a.stdin.next():
			if !ok {
				fmt.Fprintln(a.prompt)
			}
			answer := strings.ToLower(strings.TrimSpace(line))
			allow = answer == "y" || answer == "yes"
		case <-req.Done():
			fmt.Fprintln(a.prompt)
			return decisionCancelled
		}
	}
	if allow {
		if err := req.Allow(); err != nil {
			return decisionCancelled // no allow-once option, or already settled
		}
		return decisionAllow
	}
	if err := req.Reject(); err != nil {
		return decisionCancelled
	}
	return decisionReject
}

// signer answers the agent's sign-in requests with --auth.
type signer struct {
	method string // --auth; "" declines

	mu      sync.Mutex
	failure string // why sign-in did not happen, for the exit reason
}

// answer answers one auth_required event.
func (s *signer) answer(req *bridge.AuthRequest) {
	if s.method == "" {
		s.fail(fmt.Sprintf("the agent asks to sign in (%s); pass --auth METHOD_ID%s", methodList(req.Methods), withheldHint(req.Withheld)))
		req.Decline()
		return
	}
	for _, m := range req.Methods {
		if m.ID != s.method {
			continue
		}
		ans := bridge.AuthAnswer{MethodID: m.ID}
		if m.Type == bridge.AuthTypeEnvVar {
			ans.Env = map[string]string{}
			for _, v := range m.Vars {
				val, ok := os.LookupEnv(v.Name)
				if !ok && !v.Optional {
					s.fail(fmt.Sprintf("sign-in method %s needs %s in the environment", m.ID, v.Name))
					req.Decline()
					return
				}
				if ok {
					ans.Env[v.Name] = val
				}
			}
		}
		req.Answer(ans)
		return
	}
	s.fail(fmt.Sprintf("the agent does not offer sign-in method %q (it offers %s)", s.method, methodList(req.Methods)))
	req.Decline()
}

func (s *signer) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failure = msg
}

func (s *signer) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failure
}

func methodList(methods []bridge.AuthOption) string {
	if len(methods) == 0 {
		return "no method this program can carry out"
	}
	var ids []string
	for _, m := range methods {
		ids = append(ids, m.ID+" ("+m.Type+")")
	}
	sort.Strings(ids)
	return "methods: " + strings.Join(ids, ", ")
}

// terminalLogin runs an agent's own login command attached to this
// terminal, for sign-in methods of the terminal type.
func terminalLogin(ctx context.Context, login bridge.TerminalLogin) error {
	cmd := exec.CommandContext(ctx, login.Command, login.Args...)
	cmd.Env = login.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	return cmd.Run()
}
