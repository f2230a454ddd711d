/**
 * Debian's Chromium as the browser tests and benchmarks drive it through playwright-core (no
 * downloaded browser): its path and the flags for a headless run in a container with no network
 * but the package registries.
 */
export const CHROMIUM_PATH = "/usr/bin/chromium";
export const CHROMIUM_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
