package kiro

import (
	"testing"

	"github.com/acphost/acphost/bridge"
)

func TestLaunchEscalation(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"none", nil, ""},
		{"trust all", []string{"--trust-all-tools"}, "--trust-all-tools"},
		{"trust writes", []string{"--trust-tools=read,write"}, "--trust-tools=read,write"},
		{"trust shell, separate value", []string{"--trust-tools", "shell"}, "--trust-tools=shell"},
		{"trust reads only", []string{"--trust-tools=read,fs_read,grep,glob"}, ""},
		{"trust nothing", []string{"--trust-tools="}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := bridge.LaunchOptions{AgentMode: "kiro_default", ExtraArgs: tt.extra}
			if got := Profile.Modes.LaunchEscalation(o); got != tt.want {
				t.Errorf("LaunchEscalation = %q, want %q", got, tt.want)
			}
		})
	}
}
