// The layering of mink as rules (README, "Layout"): `npm run check:deps` (part of `npm test`) fails on a
// violation. Each folder has one job; these rules say who may depend on whom.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle anywhere (types included): a cycle means two modules are one module.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      comment: "src/core decides; it imports only src/core (no runtime, no storage, no HTTP).",
      severity: "error",
      from: { path: "^src/core/" },
      to: { pathNot: "^src/core/" },
    },
    {
      name: "ports-import-only-core",
      comment: "A port (src/ports) is the types its users and its implementers share, over the core alone.",
      severity: "error",
      from: { path: "^src/ports/" },
      to: { pathNot: "^src/(core|ports)/" },
    },
    {
      name: "storage-imports-core-and-storage",
      comment: "src/storage is the object store, WAL and manifests: it knows nothing of nodes, HTTP or the MetaLog.",
      severity: "error",
      from: { path: "^src/storage/" },
      to: { pathNot: "^src/(core|storage)/" },
    },
    {
      name: "node-below-http-and-router",
      comment: "src/node serves streams; the HTTP layer, the router and the Durable Objects are above it.",
      severity: "error",
      from: { path: "^src/node/" },
      to: { path: "^(src/(http|router|cli|env\\.ts|index\\.ts)|durable-objects/)" },
    },
    {
      name: "subscriptions-effects-below-node",
      comment: "src/subscriptions performs effects; it is used by the node, the HTTP layer and the MetaLog.",
      severity: "error",
      from: { path: "^src/subscriptions/" },
      to: { path: "^(src/(node|http|router|cli|storage|env\\.ts|index\\.ts)|durable-objects/)" },
    },
    {
      name: "http-and-router-not-durable-objects",
      comment: "The Worker's layers reach the Durable Objects through the ports only.",
      severity: "error",
      from: { path: "^src/(http|router)/" },
      to: { path: "^(durable-objects/|src/cli/|src/index\\.ts)" },
    },
    {
      name: "durable-objects-only-from-the-entry",
      comment: "Only the Worker's entry exports the Durable Object classes; tests may reach into them.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/index\\.ts$" },
      to: { path: "^durable-objects/" },
    },
    {
      name: "cli-is-an-http-client",
      comment: "The mink CLI talks to mink over HTTP: it imports nothing of the Worker but pure core types.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^(src/(node|storage|http|router|subscriptions|ports|env\\.ts|index\\.ts)|durable-objects/)" },
    },
    {
      name: "production-code-not-tests-or-scripts",
      comment: "Nothing shipped imports tests, benchmarks or dev scripts.",
      severity: "error",
      from: { path: "^(src|durable-objects)/" },
      to: { path: "^(test|scripts)/" },
    },
    {
      name: "no-unresolvable",
      comment: "An import that resolves to nothing is a typo or a missing dependency.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: "^(cloudflare:|node:)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist|\\.mink|\\.wrangler)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.node.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    builtInModules: { add: ["cloudflare:workers", "cloudflare:test", "cloudflare:sockets"] },
  },
};
