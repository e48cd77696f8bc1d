// wsagent.mjs serves a small ACP agent over both profiles of the remote
// transport draft with the official TypeScript SDK's server transport
// (AcpServer): WebSocket through its Node upgrade handler, on the `ws`
// library, and Streamable HTTP (POST, SSE GET streams, DELETE) through its
// Node request handler, on the same /acp endpoint. An implementation of
// the draft that is not ours, for the interop suite.
//
// usage: node wsagent.mjs SDK_DIR
//   SDK_DIR holds node_modules with @agentclientprotocol/sdk and ws.
// It listens on 127.0.0.1 at a free port, prints "PORT <n>", and serves
// /acp until stdin closes. Each session remembers its prompts; session/load
// of a known session replays them, so a client can reconnect and resume.
import http from "node:http";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node wsagent.mjs SDK_DIR");
  process.exit(2);
}
const req = createRequire(path.join(path.resolve(dir), "package.json"));
const load = (name) => import(pathToFileURL(req.resolve(name)).href);
const acp = await load("@agentclientprotocol/sdk");
const { AcpServer } = await load("@agentclientprotocol/sdk/experimental/server");
const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await load(
  "@agentclientprotocol/sdk/experimental/node",
);
const wsModule = await load("ws");
const WebSocketServer = wsModule.WebSocketServer ?? wsModule.default.WebSocketServer;

const sessions = new Map(); // session id -> prompts received, kept across connections
let next = 0;

function makeAgent() {
  const say = (client, sessionId, text) =>
    client.notify(acp.methods.client.session.update, {
      sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    });
  return acp
    .agent({ name: "wsagent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true },
      agentInfo: { name: "wsagent", version: "1.0.0" },
    }))
    .onRequest(acp.methods.agent.session.new, () => {
      const sessionId = `ws-${++next}`;
      sessions.set(sessionId, []);
      return { sessionId };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const prompts = sessions.get(params.sessionId);
      if (!prompts) throw acp.RequestError.resourceNotFound(params.sessionId);
      for (const p of prompts) {
        await client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: p } },
        });
      }
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const text = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
      sessions.get(params.sessionId)?.push(text);
      await say(client, params.sessionId, "echo: ");
      await say(client, params.sessionId, text);
      return { stopReason: "end_turn" };
    })
    .onNotification(acp.methods.agent.session.cancel, () => {});
}

const server = new AcpServer({ createAgent: makeAgent });
const wss = new WebSocketServer({ noServer: true });
const httpServer = http.createServer(createNodeHttpHandler(server));
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, wss));
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`PORT ${httpServer.address().port}`);
});
process.stdin.resume();
process.stdin.on("end", async () => {
  await server.close();
  httpServer.close();
  process.exit(0);
});
