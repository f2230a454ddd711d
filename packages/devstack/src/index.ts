export * from "./env";
export * from "./free-port";
export * from "./embedded-postgres";
export * from "./local-redis";
export * from "./test-services";
export * from "./managed-process";
export * from "./stack";
export * from "./supervisor";
