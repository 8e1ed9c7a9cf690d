// Exact type equality for the type tests: Equal<A, B> is true only when A and B are the same
// type (not merely assignable one way), so a widened overload fails the check.
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;

/** Compiles only when the value's type is exactly T: expectType<T>()(value). */
export function expectType<T>() {
  return <V>(value: V & (Equal<T, V> extends true ? unknown : never)): V => value;
}
