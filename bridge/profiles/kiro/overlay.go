package kiro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// Options are kiro-cli's own launch options, given as
// bridge.LaunchOptions.Vendor (a value or a pointer; nil means the
// defaults). Its agent (--agent) is the generic
// bridge.LaunchOptions.AgentMode, and the Model and Effort written into the
// overlay are the generic ones.
type Options struct {
	// ToolSearch configures kiro-cli's MCP tool search (nil: leave the
	// user's setting alone).
	ToolSearch *ToolSearch
}

// ToolSearch configures kiro-cli's MCP tool search: tool specs are loaded
// on demand once they are large, instead of being sent every turn.
type ToolSearch struct {
	// Enabled turns it on; when off the thresholds are dropped.
	Enabled bool
	// MinPct and MinTokens are the thresholds past which kiro-cli defers
	// tool specs (nil: 5 and 50000, kiro-cli's own). MinPct is clamped to
	// 0-100, MinTokens to 0 or more.
	MinPct    *float64
	MinTokens *int64
}

// effortLevels are kiro-cli's reasoning effort levels.
var effortLevels = []string{"low", "medium", "high", "xhigh", "max"}

// EffortKey returns the overlay key under which a model takes its
// reasoning effort: "output_config" for Claude models, "reasoning" for GPT
// models, "" for models without an effort setting (Haiku and the other
// families kiro-cli refuses it for).
func EffortKey(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "haiku"):
		return ""
	case strings.Contains(m, "opus"), strings.Contains(m, "sonnet"), strings.Contains(m, "fable"):
		return "output_config"
	case strings.Contains(m, "gpt"):
		return "reasoning"
	}
	return ""
}

// OverlayPath is the workspace overlay kiro-cli reads on start.
func OverlayPath(cwd string) string {
	return filepath.Join(cwd, ".kiro", "settings", "cli.json")
}

// WriteOverlay writes the reasoning effort (Model, Effort) and tool search
// (Options.ToolSearch) settings of o
// into <o.Cwd>/.kiro/settings/cli.json on the agent's host, atomically and
// keeping every other setting in the file. The effort goes under
// chat.modelDefaults.<model>.<key>.effort for the model's family, and the
// other family's effort is removed (kiro-cli silently ignores the wrong
// key). Nothing is written when o sets neither.
func WriteOverlay(ctx context.Context, o bridge.LaunchOptions) error {
	opts, err := bridge.VendorOptions[Options](o)
	if err != nil {
		return fmt.Errorf("kiro: %w", err)
	}
	if o.Cwd == "" || (o.Model == "" && opts.ToolSearch == nil) {
		return nil
	}
	fsys := o.HostFS()
	path := OverlayPath(o.Cwd)
	settings := map[string]any{}
	data, err := fsys.ReadFile(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("kiro: reading %s: %w", path, err)
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &settings); err != nil {
			// Never overwrite a file we cannot read back: it is the user's.
			return fmt.Errorf("kiro: %s is not a JSON object, leaving it alone: %w", path, err)
		}
		if settings == nil {
			settings = map[string]any{}
		}
	}
	if o.Model != "" {
		applyEffort(settings, o.Model, o.Effort)
	}
	if ts := opts.ToolSearch; ts != nil {
		settings["toolSearch.enabled"] = ts.Enabled
		if ts.Enabled {
			pct, tokens := 5.0, int64(50000)
			if ts.MinPct != nil {
				pct = min(100, max(0, *ts.MinPct))
			}
			if ts.MinTokens != nil {
				tokens = max(0, *ts.MinTokens)
			}
			settings["toolSearch.minPct"] = pct
			settings["toolSearch.minTokens"] = tokens
		} else {
			delete(settings, "toolSearch.minPct")
			delete(settings, "toolSearch.minTokens")
		}
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := fsys.WriteFile(ctx, path, append(out, '\n')); err != nil {
		return fmt.Errorf("kiro: writing %s: %w", path, err)
	}
	return nil
}

// applyEffort sets (or, for an empty or unknown effort, clears) a
// model's effort, sweeping the other family's key.
func applyEffort(settings map[string]any, model, effort string) {
	key := EffortKey(model)
	if !slices.Contains(effortLevels, effort) {
		effort = ""
	}
	defaults, _ := settings["chat.modelDefaults"].(map[string]any)
	if defaults == nil {
		if key == "" || effort == "" {
			return
		}
		defaults = map[string]any{}
		settings["chat.modelDefaults"] = defaults
	}
	entry, _ := defaults[model].(map[string]any)
	if entry == nil {
		entry = map[string]any{}
	}
	for _, k := range []string{"output_config", "reasoning"} {
		if k == key && effort != "" {
			sub, _ := entry[k].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			sub["effort"] = effort
			entry[k] = sub
			continue
		}
		if sub, ok := entry[k].(map[string]any); ok {
			delete(sub, "effort")
			if len(sub) == 0 {
				delete(entry, k)
			}
		}
	}
	if len(entry) == 0 {
		delete(defaults, model)
	} else {
		defaults[model] = entry
	}
	if len(defaults) == 0 {
		delete(settings, "chat.modelDefaults")
	}
}
