import type { NextConfig } from "next";

/**
 * The @volley/* workspace packages export TypeScript source, so Next compiles them. Packages that
 * open sockets or load native/optional modules stay external and are required from node_modules
 * at run time. The app reads its environment per request (src/env.ts); the one build-time knob
 * here is VOLLEY_NEXT_DIST_DIR, so two checkouts' builds (or two developers' dev servers) in one
 * tree do not overwrite each other's output, and VOLLEY_NEXT_STANDALONE for the image.
 */
const nextConfig: NextConfig = {
  transpilePackages: ["@volley/admission", "@volley/contracts", "@volley/metrics", "@volley/db", "@volley/queue", "@volley/plan-import"],
  serverExternalPackages: ["pg", "bullmq", "ioredis", "pino", "hdr-histogram-js"],
  distDir: process.env.VOLLEY_NEXT_DIST_DIR ?? ".next",
  // The web image (infra/docker/web.Dockerfile) runs Next's standalone output: only the files the
  // server needs, traced, with no dev dependencies. Off for npm start and the tests, which run the checkout.
  ...(process.env.VOLLEY_NEXT_STANDALONE === "1" ? { output: "standalone" as const } : {}),
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
