package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/envflags"
)

// errUndeclaredEnv is wrapped when a sign-in answer carries environment
// variables its method did not ask for.
var errUndeclaredEnv = errors.New("variables the sign-in method did not ask for")

// checkAuthEnv refuses a sign-in answer whose env holds anything but the
// variables the chosen env_var method declared. The bridge passes every
// variable of the answer to the restarted agent, so without this check the
// page would choose the agent's environment (LD_PRELOAD, PATH, …): code
// execution. Methods of other types take no variables at all.
func checkAuthEnv(req *bridge.AuthRequest, methodID string, env map[string]string) error {
	var declared []string
	for _, m := range req.Methods {
		if m.ID == methodID && m.Type == bridge.AuthTypeEnvVar {
			for _, v := range m.Vars {
				declared = append(declared, v.Name)
			}
		}
	}
	var extra []string
	for name := range env {
		if !slices.Contains(declared, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return fmt.Errorf("sign-in method %q: %w: %s", methodID, errUndeclaredEnv, strings.Join(extra, ", "))
}

// signIn answers a sign-in request with the --auth method, an env_var
// method with its variables from this process's environment. A request
// that does not offer the method, or whose variables are not set, is left
// to the page, with a line in the log saying why.
func (s *server) signIn(req *bridge.AuthRequest) {
	if s.cfg.Auth == "" || req == nil {
		return
	}
	i := slices.IndexFunc(req.Methods, func(m bridge.AuthOption) bool { return m.ID == s.cfg.Auth })
	if i < 0 {
		s.log.Warn("--auth: the agent does not offer this sign-in method; the page asks", "method", s.cfg.Auth, "request", req.ID)
		return
	}
	m := req.Methods[i]
	ans := bridge.AuthAnswer{MethodID: m.ID}
	if m.Type == bridge.AuthTypeEnvVar {
		ans.Env = map[string]string{}
		for _, v := range m.Vars {
			val, ok := os.LookupEnv(v.Name)
			if !ok && !v.Optional {
				s.log.Warn("--auth: a variable of the sign-in method is not set; the page asks", "method", m.ID, "variable", v.Name)
				return
			}
			if ok {
				ans.Env[v.Name] = val
			}
		}
	}
	if err := req.Answer(ans); err != nil && !errors.Is(err, bridge.ErrAlreadyAnswered) {
		s.log.Warn("--auth: answering the sign-in request", "err", err)
	}
}

// withheldHint says how to give an agent the variables its minimal
// environment left out (names only).
func withheldHint(names []string) string {
	return fmt.Sprintf("The agent did not get %s from webui's environment: restart webui with %s", strings.Join(names, ", "), envflags.Flags(names))
}
