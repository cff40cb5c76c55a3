import { randomInt } from 'node:crypto';

/** Word lists of OpenClaw's adjective-noun session slugs (`swift-meadow`, `keen-canyon`). */
const ADJECTIVES = [
  'amber',
  'briny',
  'brisk',
  'calm',
  'clear',
  'cool',
  'crisp',
  'dawn',
  'delta',
  'ember',
  'faint',
  'fast',
  'fresh',
  'gentle',
  'glow',
  'good',
  'grand',
  'keen',
  'kind',
  'lucky',
  'marine',
  'mellow',
  'mild',
  'neat',
  'nimble',
  'nova',
  'oceanic',
  'plaid',
  'quick',
  'quiet',
  'rapid',
  'salty',
  'sharp',
  'swift',
  'tender',
  'tidal',
  'tidy',
  'tide',
  'vivid',
  'warm',
  'wild',
  'young',
];
const NOUNS = [
  'atlas',
  'basil',
  'bison',
  'bloom',
  'breeze',
  'canyon',
  'cedar',
  'claw',
  'cloud',
  'comet',
  'coral',
  'cove',
  'crest',
  'crustacean',
  'daisy',
  'dune',
  'ember',
  'falcon',
  'fjord',
  'forest',
  'glade',
  'gulf',
  'harbor',
  'haven',
  'kelp',
  'lagoon',
  'lantern',
  'meadow',
  'mist',
  'nudibranch',
  'nexus',
  'ocean',
  'orbit',
  'otter',
  'pine',
  'prairie',
  'reef',
  'ridge',
  'river',
  'rook',
  'sable',
  'sage',
  'seaslug',
  'shell',
  'shoal',
  'shore',
  'slug',
  'summit',
  'tidepool',
  'trail',
  'valley',
  'wharf',
  'willow',
  'zephyr',
];
const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

const pick = (words: readonly string[]): string => words[randomInt(words.length)];

function slugBase(words: 2 | 3): string {
  const parts = [pick(ADJECTIVES), pick(NOUNS)];
  if (words === 3) parts.push(pick(NOUNS));
  return parts.join('-');
}

function tryWords(words: 2 | 3, isTaken: (id: string) => boolean): string | undefined {
  for (let attempt = 0; attempt < 12; attempt += 1) {
    const base = slugBase(words);
    if (!isTaken(base)) return base;
    for (let n = 2; n <= 12; n += 1) {
      if (!isTaken(`${base}-${n}`)) return `${base}-${n}`;
    }
  }
  return undefined;
}

/**
 * A short, speakable session id (`adjective-noun`), numbered (`-2`…`-12`) then three words when
 * taken, and a random suffix as the last resort — the same ladder OpenClaw climbs.
 */
export function createSessionId(isTaken: (id: string) => boolean = () => false): string {
  const id = tryWords(2, isTaken) ?? tryWords(3, isTaken);
  if (id) return id;
  let suffix = '';
  for (let i = 0; i < 6; i += 1) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return `${slugBase(3)}-${suffix}`;
}
