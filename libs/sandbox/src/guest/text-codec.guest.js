/**
 * Pure-JavaScript `TextEncoder` / `TextDecoder` for the guest (SPEC §4): QuickJS has neither.
 *
 * This file is ES2020 statements, evaluated inside QuickJS before user code. It installs
 * both classes on `globalThis` as non-enumerable, writable, configurable properties, like the web
 * platform does. Behaviour follows the WHATWG Encoding Standard for UTF-8 only:
 * - `TextEncoder#encode` turns lone surrogates into U+FFFD (EF BF BD); `encodeInto` is provided;
 * - `TextDecoder` accepts the UTF-8 labels (`utf-8`, `utf8`, `unicode-1-1-utf-8`, any case,
 *   surrounding ASCII whitespace), else `RangeError`; `fatal` throws `TypeError` on malformed
 *   input, otherwise each maximal invalid subpart becomes one U+FFFD (same output as Node);
 *   a leading BOM is dropped unless `ignoreBOM`; `{ stream: true }` keeps an incomplete trailing
 *   sequence for the next call; input may be an ArrayBuffer, SharedArrayBuffer or any view.
 * Intrinsics are captured at install time so later guest changes to `Uint8Array` or
 * `String.fromCharCode` do not alter decoding.
 */
(function () {
  'use strict';
  var FunctionCall = Function.prototype.call;
  var bindCall = FunctionCall.bind.bind(FunctionCall);
  var U8 = Uint8Array;
  var fromCharCode = String.fromCharCode;
  var applyFn = bindCall(Function.prototype.apply);
  var charCodeAt = bindCall(String.prototype.charCodeAt);
  var toLowerCase = bindCall(String.prototype.toLowerCase);
  var replace = bindCall(String.prototype.replace);
  var stringSlice = bindCall(String.prototype.slice);
  var isView = ArrayBuffer.isView;
  var defineProperty = Object.defineProperty;
  var toStr = String;
  var arrayBufferByteLength = bindCall(Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get);
  var sharedByteLength =
    typeof SharedArrayBuffer === 'function'
      ? bindCall(Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength').get)
      : null;
  var viewBuffer = bindCall(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(U8.prototype), 'buffer').get);
  var viewOffset = bindCall(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(U8.prototype), 'byteOffset').get);
  var viewLength = bindCall(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(U8.prototype), 'byteLength').get);
  var dataViewBuffer = bindCall(Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get);
  var dataViewOffset = bindCall(Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get);
  var dataViewLength = bindCall(Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get);
  var UTF8_LABELS = {
    'utf-8': true,
    utf8: true,
    'unicode-1-1-utf-8': true,
    unicode11utf8: true,
    unicode20utf8: true,
    'x-unicode20utf8': true,
  };
  var CHUNK = 4096;

  function brand(check, value) {
    try {
      check(value);
      return true;
    } catch {
      return false;
    }
  }

  /* UTF-16 string → UTF-8 bytes, lone surrogates as U+FFFD. */
  function utf8Length(text) {
    var bytes = 0;
    for (var i = 0; i < text.length; i++) {
      var c = charCodeAt(text, i);
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (charCodeAt(text, i + 1) & 0xfc00) === 0xdc00) {
        bytes += 4;
        i++;
      } else bytes += 3;
    }
    return bytes;
  }

  /* Writes code points of text into target from 0; stops before a code point that does not fit. */
  function writeUtf8(text, target) {
    var read = 0,
      written = 0,
      limit = target.length;
    for (var i = 0; i < text.length; i++) {
      var c = charCodeAt(text, i),
        units = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        var next = i + 1 < text.length ? charCodeAt(text, i + 1) : 0;
        if (c <= 0xdbff && (next & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          units = 2;
        } else c = 0xfffd;
      }
      var size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (written + size > limit) break;
      if (size === 1) target[written] = c;
      else if (size === 2) {
        target[written] = 0xc0 | (c >> 6);
        target[written + 1] = 0x80 | (c & 0x3f);
      } else if (size === 3) {
        target[written] = 0xe0 | (c >> 12);
        target[written + 1] = 0x80 | ((c >> 6) & 0x3f);
        target[written + 2] = 0x80 | (c & 0x3f);
      } else {
        target[written] = 0xf0 | (c >> 18);
        target[written + 1] = 0x80 | ((c >> 12) & 0x3f);
        target[written + 2] = 0x80 | ((c >> 6) & 0x3f);
        target[written + 3] = 0x80 | (c & 0x3f);
      }
      written += size;
      read += units;
      i += units - 1;
    }
    return { read: read, written: written };
  }

  function bytesOf(input) {
    if (input === undefined) return new U8(0);
    if (isView(input)) {
      if (brand(viewLength, input)) return new U8(viewBuffer(input), viewOffset(input), viewLength(input));
      return new U8(dataViewBuffer(input), dataViewOffset(input), dataViewLength(input));
    }
    if (brand(arrayBufferByteLength, input) || (sharedByteLength && brand(sharedByteLength, input))) return new U8(input);
    throw new TypeError('The "input" argument must be an ArrayBuffer, SharedArrayBuffer or ArrayBufferView');
  }

  /* Collects UTF-16 code units and turns them into a string in bounded chunks. */
  function newSink() {
    return { units: [], count: 0, text: '' };
  }
  function emit(sink, unit) {
    sink.units[sink.count++] = unit;
    if (sink.count === CHUNK) flush(sink);
  }
  function emitCodePoint(sink, cp) {
    if (cp < 0x10000) emit(sink, cp);
    else {
      cp -= 0x10000;
      emit(sink, 0xd800 + (cp >> 10));
      emit(sink, 0xdc00 + (cp & 0x3ff));
    }
  }
  function flush(sink) {
    if (sink.count === 0) return;
    sink.units.length = sink.count;
    sink.text += applyFn(fromCharCode, null, sink.units);
    sink.units = [];
    sink.count = 0;
  }

  function malformed(decoder, sink) {
    if (decoder._fatal) throw new TypeError('The encoded data was not valid for encoding utf-8');
    emit(sink, 0xfffd);
  }

  /* WHATWG UTF-8 decoder; state lives on the decoder between streamed calls. */
  function decodeBytes(decoder, bytes, stream) {
    var sink = newSink();
    var needed = decoder._needed,
      seen = decoder._seen,
      cp = decoder._cp;
    var lower = decoder._lower,
      upper = decoder._upper;
    for (var i = 0; i < bytes.length; i++) {
      var b = bytes[i];
      if (needed === 0) {
        if (b <= 0x7f) {
          emit(sink, b);
          continue;
        }
        if (b >= 0xc2 && b <= 0xdf) {
          needed = 1;
          cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) lower = 0xa0;
          if (b === 0xed) upper = 0x9f;
          needed = 2;
          cp = b & 0xf;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) lower = 0x90;
          if (b === 0xf4) upper = 0x8f;
          needed = 3;
          cp = b & 0x7;
        } else {
          malformed(decoder, sink);
        }
        continue;
      }
      if (b < lower || b > upper) {
        cp = needed = seen = 0;
        lower = 0x80;
        upper = 0xbf;
        malformed(decoder, sink);
        i--; /* reprocess this byte as the start of something new */
        continue;
      }
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (b & 0x3f);
      seen++;
      if (seen === needed) {
        emitCodePoint(sink, cp);
        cp = needed = seen = 0;
      }
    }
    if (needed !== 0 && !stream) {
      cp = needed = seen = 0;
      lower = 0x80;
      upper = 0xbf;
      malformed(decoder, sink);
    }
    decoder._needed = needed;
    decoder._seen = seen;
    decoder._cp = cp;
    decoder._lower = lower;
    decoder._upper = upper;
    flush(sink);
    return sink.text;
  }

  function resetState(decoder) {
    decoder._needed = 0;
    decoder._seen = 0;
    decoder._cp = 0;
    decoder._lower = 0x80;
    decoder._upper = 0xbf;
    decoder._bomSeen = false;
  }

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input) {
      var text = input === undefined ? '' : toStr(input);
      var bytes = new U8(utf8Length(text));
      writeUtf8(text, bytes);
      return bytes;
    }
    encodeInto(input, destination) {
      if (!(destination instanceof U8)) throw new TypeError('The "destination" argument must be a Uint8Array');
      return writeUtf8(toStr(input), destination);
    }
  }

  class TextDecoder {
    constructor(label, options) {
      var name = label === undefined ? 'utf-8' : toLowerCase(replace(toStr(label), /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, ''));
      if (UTF8_LABELS[name] !== true) throw new RangeError('The "' + toStr(label) + '" encoding is not supported');
      var opts = options === undefined || options === null ? {} : options;
      defineProperty(this, '_fatal', { value: !!opts.fatal });
      defineProperty(this, '_ignoreBOM', { value: !!opts.ignoreBOM });
      var state = ['_needed', '_seen', '_cp', '_lower', '_upper', '_bomSeen'];
      for (var i = 0; i < state.length; i++) defineProperty(this, state[i], { value: 0, writable: true });
      resetState(this);
    }
    get encoding() {
      return 'utf-8';
    }
    get fatal() {
      return this._fatal;
    }
    get ignoreBOM() {
      return this._ignoreBOM;
    }
    decode(input, options) {
      var stream = options !== undefined && options !== null && !!options.stream;
      var text = decodeBytes(this, bytesOf(input), stream);
      if (!this._ignoreBOM && !this._bomSeen && text.length > 0) {
        this._bomSeen = true;
        if (charCodeAt(text, 0) === 0xfeff) text = stringSlice(text, 1);
      }
      if (!stream) resetState(this);
      return text;
    }
  }

  defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: 'TextEncoder', configurable: true });
  defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: 'TextDecoder', configurable: true });
  defineProperty(globalThis, 'TextEncoder', { value: TextEncoder, writable: true, configurable: true, enumerable: false });
  defineProperty(globalThis, 'TextDecoder', { value: TextDecoder, writable: true, configurable: true, enumerable: false });
})();
