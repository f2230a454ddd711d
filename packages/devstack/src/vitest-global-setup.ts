import type { TestProject } from "vitest/node";
import { startTestServices } from "./test-services";

declare module "vitest" {
  export interface ProvidedContext {
    databaseServerUrl: string;
    redisUrl: string;
  }
}

/** Vitest globalSetup: one set of test servers per test run, handed to tests via inject(). */
export default async function setup(project: TestProject) {
  const services = await startTestServices();
  project.provide("databaseServerUrl", services.databaseServerUrl);
  project.provide("redisUrl", services.redisUrl);
  return () => services.stop();
}
