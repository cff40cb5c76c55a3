/**
 * The API key lives only in this tab's session storage: gone when the tab closes, never sent
 * anywhere but this origin's `/v1`.
 */
const KEY = 'codemode.console.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
