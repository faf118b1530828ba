;; The search loop of literal-scan.ts: where, in a text of bytes, one of a set of literals could begin.
;; literal-scan.ts explains the method and fills in the tables; scripts/build-literal-scan.mjs compiles this file
;; into literal-scan-wasm.ts (a test checks that the two agree).
;;
;; Memory: bytes 0-95 hold six 16-byte tables, for the fingerprint's first, second and third byte in turn: one
;; indexed by the byte's low half, one by its high half, each entry a bit per bucket of literals that allows it.
;; The text starts at byte 128, written there by the caller; the loads read up to 17 bytes past `end`, so the
;; memory must reach that far (what lies there only makes candidates, which the caller checks).
(module
  (memory (export "memory") 1)

  ;; The first position in [from, end) of the text where every one of the six tables lets some bucket through
  ;; (a candidate: the caller checks whether a literal really begins there), or -1 if there is none.
  (func (export "find") (param $from i32) (param $end i32) (result i32)
    (local $lo0 v128) (local $hi0 v128) (local $lo1 v128) (local $hi1 v128) (local $lo2 v128) (local $hi2 v128)
    (local $fold v128) (local $low v128) (local $bytes v128) (local $buckets v128) (local $at i32) (local $found i32)
    (local.set $lo0 (v128.load (i32.const 0)))
    (local.set $hi0 (v128.load (i32.const 16)))
    (local.set $lo1 (v128.load (i32.const 32)))
    (local.set $hi1 (v128.load (i32.const 48)))
    (local.set $lo2 (v128.load (i32.const 64)))
    (local.set $hi2 (v128.load (i32.const 80)))
    ;; Setting bit 5 lower-cases ASCII letters; the tables were built with the same folding. A byte's high half is
    ;; taken by a 16-bit shift and a mask: x64 has no byte shift, and i8x16.shr_u costs V8 several instructions.
    (local.set $fold (i8x16.splat (i32.const 0x20)))
    (local.set $low (i8x16.splat (i32.const 0x0f)))
    (local.set $at (local.get $from))
    (block $none
      (loop $sixteen
        (br_if $none (i32.ge_u (local.get $at) (local.get $end)))
        ;; Sixteen positions at once: the buckets their first byte allows...
        (local.set $bytes (v128.or (v128.load offset=128 (local.get $at)) (local.get $fold)))
        (local.set $buckets (v128.and
          (i8x16.swizzle (local.get $lo0) (v128.and (local.get $bytes) (local.get $low)))
          (i8x16.swizzle (local.get $hi0) (v128.and (i16x8.shr_u (local.get $bytes) (i32.const 4)) (local.get $low)))))
        ;; ...and of those, the ones their second byte allows...
        (local.set $bytes (v128.or (v128.load offset=129 (local.get $at)) (local.get $fold)))
        (local.set $buckets (v128.and (local.get $buckets) (v128.and
          (i8x16.swizzle (local.get $lo1) (v128.and (local.get $bytes) (local.get $low)))
          (i8x16.swizzle (local.get $hi1) (v128.and (i16x8.shr_u (local.get $bytes) (i32.const 4)) (local.get $low))))))
        ;; ...and their third.
        (local.set $bytes (v128.or (v128.load offset=130 (local.get $at)) (local.get $fold)))
        (local.set $buckets (v128.and (local.get $buckets) (v128.and
          (i8x16.swizzle (local.get $lo2) (v128.and (local.get $bytes) (local.get $low)))
          (i8x16.swizzle (local.get $hi2) (v128.and (i16x8.shr_u (local.get $bytes) (i32.const 4)) (local.get $low))))))
        (if (v128.any_true (local.get $buckets))
          (then
            ;; The first of the sixteen with a bucket left; past `end` (the last sixteen run over it) is none.
            (local.set $found (i32.add (local.get $at)
              (i32.ctz (i8x16.bitmask (i8x16.ne (local.get $buckets) (v128.const i64x2 0 0))))))
            (return (select (local.get $found) (i32.const -1) (i32.lt_u (local.get $found) (local.get $end))))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $sixteen)))
    (i32.const -1)))
