// A small stdio MCP server in Node, for the checker's Node wording: it is correct except that a
// line that is not JSON gets no reply at all (as many real servers do). No dependencies.
"use strict";
const readline = require("readline");

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

const handlers = {
  initialize: () => ({
    protocolVersion: "2025-11-25",
    capabilities: {},
    serverInfo: { name: "tiny-node", version: "1.0.0" },
  }),
  ping: () => ({}),
};

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return; // the defect: a parse error deserves -32700
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    send({ id: null, error: { code: -32600, message: "Invalid Request" } });
    return;
  }
  const hasId = Object.prototype.hasOwnProperty.call(message, "id");
  const validId = typeof message.id === "string" || Number.isInteger(message.id);
  if (typeof message.method !== "string" || (hasId && !validId)) {
    send({ id: validId ? message.id : null, error: { code: -32600, message: "Invalid Request" } });
    return;
  }
  if (!hasId) return; // a notification: never answered
  const handler = handlers[message.method];
  if (handler) send({ id: message.id, result: handler(message.params) });
  else send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
});
