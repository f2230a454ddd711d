/** The shortest password sign-up takes: better-auth enforces it, the sign-up form says it before anyone types. */
export const MIN_PASSWORD_LENGTH = 8;
