import { api, KeyRefused } from './api.js';
import { fill, h, notice } from './elements.js';
import { forgetKey, storedKey, storeKey } from './key-store.js';
import { route, type Route } from './routes.js';
import type { ViewContext } from './view-context.js';
import { renderApprovals } from './approvals-view.js';
import { renderFleet } from './fleet-view.js';
import { renderRun } from './run-view.js';
import { renderSession } from './session-view.js';
import { renderSessions } from './sessions-view.js';

const main = document.getElementById('main') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
let current: AbortController | undefined;
/** Null until known: whether this API asks for keys at all. */
let keysRequired: boolean | null = null;

function render(): void {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const target = route(location.hash);
  markNav(target);
  main.replaceChildren();
  const ctx: ViewContext = { root: main, signal: controller.signal, askForKey };
  switch (target.name) {
    case 'sessions':
      return renderSessions(ctx);
    case 'session':
      return renderSession(ctx, target.sessionId);
    case 'run':
      return renderRun(ctx, target.sessionId, target.runId);
    case 'approvals':
      return renderApprovals(ctx);
    case 'fleet':
      return renderFleet(ctx);
    case 'unknown':
      fill(main, notice('info', `Nothing lives at ${location.hash}.`, h('a', { href: '#/' }, 'Go to the sessions list')));
  }
}

function markNav(target: Route): void {
  const section = target.name === 'session' || target.name === 'run' ? 'sessions' : target.name;
  for (const link of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (link.dataset.nav === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function showWho(): void {
  if (keysRequired === false) {
    fill(who, 'No API keys on this server: tenant "default"');
    return;
  }
  fill(
    who,
    'Key held in this tab',
    h(
      'button',
      {
        type: 'button',
        class: 'link',
        onclick: () => {
          forgetKey();
          askForKey('Key forgotten. Enter a key to continue.');
        },
      },
      'Forget key',
    ),
  );
}

function askForKey(reason: string): void {
  current?.abort();
  forgetKey();
  fill(who);
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const status = h('p', { class: 'muted', role: 'status' }, reason);
  const form = h(
    'form',
    { class: 'key-form', 'aria-labelledby': 'key-title' },
    h('h1', { id: 'key-title' }, 'Enter an API key'),
    status,
    h('label', { for: 'api-key' }, 'API key (a key of CODEMODE_API_KEYS; kept in this tab only, until it closes)'),
    input,
    h('button', { type: 'submit' }, 'Continue'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    storeKey(input.value.trim());
    void start(status);
  });
  fill(main, form);
  input.focus();
}

/** Finds out whether keys are needed and whether the held one works, then shows the view. */
async function start(status?: HTMLElement): Promise<void> {
  try {
    await api('GET', '/v1/sessions?limit=1');
    if (keysRequired === null) keysRequired = storedKey() !== null;
    showWho();
    render();
  } catch (error) {
    if (error instanceof KeyRefused) {
      keysRequired = true;
      askForKey(storedKey() ? 'The API refused this key (401). Check it and try again.' : 'This server needs an API key.');
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    const target = status ?? main;
    fill(target, notice('error', `The API could not be reached: ${message}`, 'Check that the API is running, then reload this page.'));
  }
}

window.addEventListener('hashchange', () => {
  if (keysRequired === false || storedKey()) render();
});
void start();
