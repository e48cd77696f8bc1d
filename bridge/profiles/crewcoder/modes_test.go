package crewcoder

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
		{"review", bridge.LaunchOptions{Vendor: Options{Approval: Review}}, ""},
		{"always", bridge.LaunchOptions{Vendor: &Options{Approval: Always}}, ""},
		{"invalid fails closed to review", bridge.LaunchOptions{Vendor: Options{Approval: "yolo"}}, ""},
		{"never", bridge.LaunchOptions{Vendor: Options{Approval: Never}}, "--approval never"},
		{"full access", bridge.LaunchOptions{Vendor: &Options{Approval: FullAccess}}, "--approval full-access"},
		{"sandboxed", bridge.LaunchOptions{Vendor: Options{Approval: Sandboxed}}, "--approval sandboxed"},
		{"extra args", bridge.LaunchOptions{ExtraArgs: []string{"--approval", "full-access"}}, "--approval full-access"},
		{"extra args joined", bridge.LaunchOptions{ExtraArgs: []string{"--approval=never"}}, "--approval never"},
		{"extra args review", bridge.LaunchOptions{Vendor: Options{Approval: Always}, ExtraArgs: []string{"--approval=review"}}, ""},
		{"agent profile is no escalation", bridge.LaunchOptions{AgentMode: "crewcoder"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Profile.Modes.LaunchEscalation(tt.o); got != tt.want {
				t.Errorf("LaunchEscalation = %q, want %q", got, tt.want)
			}
		})
	}
	// The flag reported is the one the launch really passes.
	argv, err := args(bridge.LaunchOptions{Vendor: Options{Approval: FullAccess}})
	if err != nil || argv[1] != "--approval" || argv[2] != FullAccess {
		t.Fatalf("args = %q, %v", argv, err)
	}
}
