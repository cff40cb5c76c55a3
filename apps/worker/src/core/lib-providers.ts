import type { FactoryProvider } from '@nestjs/common';

/** A class whose one instance a lib's factory builds. */
type Built<T> = abstract new (...args: never[]) => T;

/**
 * Nest providers for what one lib's factory built (`createEventStores`, `createFleetStores`):
 * `token` provides the factory's result, built once at boot, and each class is provided by the
 * field of that result named beside it.
 */
export function providersFrom<S extends object>(token: symbol, classes: { readonly [K in keyof S]?: Built<S[K]> }): FactoryProvider[] {
  return Object.entries(classes).map(([field, provide]) => ({
    provide: provide as Built<unknown>,
    inject: [token],
    useFactory: (built: S) => built[field as keyof S],
  }));
}
