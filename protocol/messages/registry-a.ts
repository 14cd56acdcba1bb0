import type { ApiSpec } from '../schema/types.js';

/** Declarations of the produce/fetch/metadata/admin APIs. Add each API here as it is declared. */
export const API_SPECS_A: readonly ApiSpec[] = [];
