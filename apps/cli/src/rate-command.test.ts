import { describe, expect, it } from "vitest";
import { runCli } from "./cli";
import { bufferIo } from "./test-support";

/** Bad input is refused before anything is sent (nothing listens at this VOLLEY_URL: a request would say "cannot reach"). */
const env = { VOLLEY_URL: "http://127.0.0.1:9" };

describe("volley rate", () => {
  it.each([
    [["rate", "run_1"], /give one of: the new rate .*, --scale .* or --connections/],
    [["rate", "run_1", "40", "--scale", "2"], /give one of/],
    [["rate", "run_1", "--connections", "2.5"], /--connections must be a whole number, like 200 \(got "2.5"\)/],
    [["rate", "run_1", "fast"], /<rate> must be a number above 0, like 40 \(got "fast"\)/],
    [["rate", "run_1", "--scale", "0"], /--scale must be a number above 0, like 2 or 0.5 \(got "0"\)/],
  ])("%j is refused with exit code 2 and what to do", async (args, message) => {
    const { io, out } = bufferIo(env);
    expect(await runCli(args, io)).toBe(2);
    expect(out.stderr).toMatch(message);
    expect(out.stderr).not.toMatch(/cannot reach/);
  });

  it("says so when the server cannot be reached", async () => {
    const { io, out } = bufferIo(env);
    expect(await runCli(["rate", "run_1", "40"], io)).toBe(2);
    expect(out.stderr).toMatch(/cannot reach Volley at http:\/\/127.0.0.1:9/);
  });
});
