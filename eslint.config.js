// Typed linting: floating promises are real bugs in Workers (an un-awaited storage write can be lost).
import tseslint from "typescript-eslint";

/** Shipped code: what the Worker, the CLI and the scripts run (tests are not). */
const SHIPPED = ["src/**/*.ts", "durable-objects/**/*.ts", "scripts/**/*.ts", "bin/**/*.js"];

export default tseslint.config(
  { ignores: ["node_modules/", "**/dist/", ".wrangler/", ".mink/", "reports/", ".stryker-tmp/", "worker-configuration.d.ts", ".dependency-cruiser.cjs"] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The first project that includes a file types it; tsconfig.stray.json catches every other TypeScript
        // file in the repository (one saved at the top, say), so a new file is linted instead of refused.
        project: ["./src/core/tsconfig.json", "./tsconfig.json", "./tsconfig.node.json", "./tsconfig.stray.json"],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/switch-exhaustiveness-check": "error",
    },
  },
  {
    // The pure core: no runtime, no I/O, no clock.
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["cloudflare:*", "node:*", "hono", "hono/*", "aws4fetch", "miniflare", "wrangler"], message: "src/core is pure: no runtime or I/O imports." },
          { group: ["../storage/*", "../http/*", "../../durable-objects/*"], message: "src/core depends on nothing outside src/core." },
        ],
      }],
      "no-restricted-globals": ["error",
        { name: "fetch", message: "src/core does no I/O." },
        { name: "crypto", message: "ids and randomness are parameters of the core." },
        { name: "setTimeout", message: "time is a parameter of the core." },
      ],
      "no-restricted-properties": ["error",
        { object: "Date", property: "now", message: "time is a parameter of the core." },
        { object: "Math", property: "random", message: "randomness is a parameter of the core." },
      ],
    },
  },
  {
    // The mink CLI runs on Node against the admin API over HTTP: nothing from the Worker side.
    files: ["src/cli/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: ["cloudflare:*", "hono", "hono/*", "aws4fetch", "miniflare", "wrangler", "@cloudflare/*"], message: "src/cli is a Node program: no Worker runtime imports." },
          { group: ["../*"], message: "src/cli talks to mink over HTTP only: import nothing outside src/cli." },
        ],
      }],
    },
  },
  {
    // One parse of each request (docs/access.md, "One parse"): the Worker's handlers, the router and the
    // node act on the request's target (targetOf, src/http/request-target.ts), never on the URL's path, so
    // no second parser can disagree with the one the access decision used. The admin API (src/admin) is left out: its one
    // decision (the admin token) does not depend on the path, and it sees the canonical URL like every handler.
    files: ["src/http/**/*.ts", "src/node-http/**/*.ts", "src/router/**/*.ts", "src/index.ts", "durable-objects/**/*.ts"],
    ignores: ["src/http/request-target.ts"],
    rules: {
      "no-restricted-syntax": ["error",
        { selector: "MemberExpression[property.name='pathname']", message: "Act on the request's target (targetOf, src/http/request-target.ts), not on the URL's path." },
        { selector: "MemberExpression[object.property.name='req'][property.name=/^(param|path|routePath)$/]", message: "Act on the request's target (targetOf, src/http/request-target.ts), not on hono's reading of the path." },
      ],
    },
  },
  {
    // Small units (issue 23): a file of shipped code holds one concern in at most 300 lines and a function
    // does one step in at most 70, every line counted (blank lines and comments too). Tests are exempt.
    files: SHIPPED,
    rules: {
      "max-lines": ["error", { max: 300, skipBlankLines: false, skipComments: false }],
      "max-lines-per-function": ["error", { max: 70, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Plain JavaScript outside every tsconfig: the lint config, the StrykerJS config and the CLI launcher.
    files: ["eslint.config.js", "stryker.config.mjs", "bin/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
