import type { ApiSpec } from '../schema/types.js';
import { API_SPECS_A } from './registry-a.js';
import { API_SPECS_B } from './registry-b.js';

/** Every API this project declares, by API key. */
export const API_SPECS: ReadonlyMap<number, ApiSpec> = new Map(
  [...API_SPECS_A, ...API_SPECS_B].map((spec) => [spec.apiKey, spec] as const),
);
