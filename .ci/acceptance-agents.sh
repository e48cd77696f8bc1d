#!/usr/bin/env bash
# Installs the ACP agents of the authority acceptance run (bridge's
# TestInteropAuthorityAcceptance) at pinned versions, each in DIR/<name>,
# from the npm registry; they run offline against the fake model of
# shared/peers. Idempotent. Usage: acceptance-agents.sh DIR [NAME...]
# (NAME: only those agents). Then:
# ACPHOST_ACCEPTANCE_DIR=DIR go test -tags interop -run InteropAuthorityAcceptance ./bridge/
# claude-agent-acp and codex-acp are newer releases of the agents in
# shared/peers, under their new package names: they advertise steering
# (_meta.steering.supported) and session/fork, which the pinned ones there
# do not (bridge's interop_steer_test.go). ws-sdk is the TypeScript SDK
# release with a WebSocket server transport, and the ws library under it:
# internal/peertest/testdata/wsagent.mjs serves an agent with them
# (bridge's interop_websocket_test.go), and over Streamable HTTP too
# (interop_http_test.go).
set -euo pipefail
dir=${1:?usage: acceptance-agents.sh DIR [NAME...]}
shift
agents=(
  "gemini @google/gemini-cli@0.61.0"
  "qwen @qwen-code/qwen-code@0.15.10"
  "opencode opencode-ai@1.18.33"
  "copilot @github/copilot@1.0.102"
  "claude-agent-acp @agentclientprotocol/claude-agent-acp@0.101.0"
  "codex-acp @agentclientprotocol/codex-acp@2.6.0"
  "ws-sdk @agentclientprotocol/sdk@2.4.0 ws@8.18.3"
)
for entry in "${agents[@]}"; do
  read -r name pkg <<<"$entry" # pkg: one package or several, space-separated
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  mkdir -p "$dir/$name"
  stamp="$dir/$name/.installed"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$pkg" ]; then
    (cd "$dir/$name" && npm install --no-audit --no-fund --loglevel=error $pkg >/dev/null)
    echo "$pkg" >"$stamp"
  fi
done
