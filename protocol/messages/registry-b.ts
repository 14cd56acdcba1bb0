import type { ApiSpec } from '../schema/types.js';

/** Declarations of the group, offset, SASL and transaction APIs. Add each API here as it is declared. */
export const API_SPECS_B: readonly ApiSpec[] = [];
