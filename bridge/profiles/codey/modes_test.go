package codey

import (
	"testing"

	"github.com/acphost/acphost/bridge"
)

func TestLaunchEscalation(t *testing.T) {
	tests := []struct {
		name string
		o    bridge.LaunchOptions
		want string
	}{
		{"default", bridge.LaunchOptions{}, ""},
		{"default mode", bridge.LaunchOptions{Vendor: Options{PermissionMode: "default"}}, ""},
		{"unknown mode is default", bridge.LaunchOptions{Vendor: Options{PermissionMode: "bypass"}}, ""},
		{"always approve", bridge.LaunchOptions{Vendor: Options{AlwaysApprove: true}}, "--always-approve"},
		{"auto", bridge.LaunchOptions{Vendor: &Options{PermissionMode: "auto"}}, "--permission-mode auto"},
		{"accept edits", bridge.LaunchOptions{Vendor: Options{PermissionMode: "acceptEdits"}}, "--permission-mode acceptEdits"},
		{"extra always approve", bridge.LaunchOptions{ExtraArgs: []string{"--always-approve"}}, "--always-approve"},
		{"extra auto", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode", "auto"}}, "--permission-mode auto"},
		{"extra auto joined", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode=acceptEdits"}}, "--permission-mode acceptEdits"},
		{"extra default", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode", "default"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Profile.Modes.LaunchEscalation(tt.o); got != tt.want {
				t.Errorf("LaunchEscalation = %q, want %q", got, tt.want)
			}
		})
	}
}
