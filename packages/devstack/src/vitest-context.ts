// Types for inject("databaseServerUrl") / inject("redisUrl"), provided by vitest-global-setup.ts.
declare module "vitest" {
  export interface ProvidedContext {
    databaseServerUrl: string;
    redisUrl: string;
  }
}
export {};
