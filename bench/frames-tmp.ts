import { readFileSync } from "node:fs";
import { intervalFrameSchema, HISTOGRAMS } from "@volley/contracts";
import { mergeEncoded } from "@volley/metrics";
const frames = readFileSync(process.argv[2]!, "utf8").trimEnd().split("\n").map((l) => intervalFrameSchema.parse(JSON.parse(l)));
for (const f of frames) {
  const h = mergeEncoded([f.histograms[HISTOGRAMS.sendLag as keyof typeof f.histograms]].filter(Boolean) as string[]);
  console.log(f.index, "n", h.totalCount, "p50", (h.getValueAtPercentile(50) / 1000).toFixed(3), "p99", (h.getValueAtPercentile(99) / 1000).toFixed(3), "max", (h.maxValue / 1000).toFixed(3));
}
