import type { NextConfig } from "next";

/**
 * The @volley/* workspace packages export TypeScript source, so Next compiles them. Packages that
 * open sockets or load native/optional modules stay external and are required from node_modules
 * at run time. Nothing here reads the environment: web reads it per request (src/env.ts).
 */
const nextConfig: NextConfig = {
  transpilePackages: ["@volley/contracts", "@volley/metrics", "@volley/db", "@volley/queue"],
  serverExternalPackages: ["pg", "bullmq", "ioredis", "pino", "hdr-histogram-js"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
