/** Input that cannot become a plan; the message names what is wrong and how to get a usable file. */
export class PlanImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanImportError";
  }
}
