// Benchmark peer: the official MCP TypeScript SDK (1.32.x) server with one `echo` tool.
//
//   node ts_server.mjs http PORT   Streamable HTTP, stateless (a server and transport per
//                                  request, the SDK's documented stateless pattern), JSON
//                                  responses, on 127.0.0.1 only
//   node ts_server.mjs stdio
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function makeServer() {
  const server = new McpServer({ name: "bench-ts", version: "0.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text back.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const [mode, port] = process.argv.slice(2);
if (mode === "stdio") {
  await makeServer().connect(new StdioServerTransport());
} else if (mode === "http" && port) {
  const httpServer = http.createServer(async (req, res) => {
    if (req.method !== "POST" || !req.url.startsWith("/mcp")) {
      res.writeHead(405).end();
      return;
    }
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  httpServer.keepAliveTimeout = 60_000;
  httpServer.listen(Number(port), "127.0.0.1", () => console.error(`listening on 127.0.0.1:${port}`));
} else {
  console.error("usage: node ts_server.mjs http PORT | stdio");
  process.exit(2);
}
