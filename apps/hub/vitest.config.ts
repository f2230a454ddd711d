import { servicesTestConfig } from "../../packages/devstack/src/vitest-config";

export default servicesTestConfig();
