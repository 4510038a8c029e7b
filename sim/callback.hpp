// A move-only `void()` callable with inline storage, for the engine's hot paths.
//
// Captures: any callable of up to kInlineBytes (40) bytes (a lambda capturing five pointers or
// integers) is stored inline with no heap allocation; larger ones fall back to one heap
// allocation. This is what lets the event queue run with no allocation per event, unlike
// std::function, whose inline buffer (16 bytes in libstdc++) is too small for typical captures.
// Ignores: copying (events are owned exactly once), return values and arguments.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace ridge::sim {

/// A move-only `void()` callable; callables up to kInlineBytes are stored without allocation.
class Callback {
 public:
  static constexpr std::size_t kInlineBytes = 40;
  /// Alignment of the inline buffer: 8, so a Callback is 48 bytes and an event's slot (callable,
  /// sequence, generation) fits one cache line; callables needing more alignment use the heap.
  static constexpr std::size_t kAlign = 8;

  Callback() = default;

  /// Wraps any `void()` callable (lambda, functor, function pointer).
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, Callback> && std::is_invocable_v<D&>>>
  Callback(F&& f) {  // NOLINT(google-explicit-constructor): implicit, so lambdas pass directly
    emplace(std::forward<F>(f));
  }

  Callback(Callback&& o) noexcept : ops_(o.ops_) {
    if (ops_) {
      move_from(o);
      o.ops_ = nullptr;
    }
  }
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) {
        move_from(o);
        o.ops_ = nullptr;
      }
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  /// Replaces the held callable with `f`, constructed in place.
  template <typename F, typename D = std::decay_t<F>>
  void emplace(F&& f) {
    if constexpr (std::is_same_v<D, Callback>) {
      static_assert(!std::is_lvalue_reference_v<F>, "pass a Callback by std::move");
      *this = std::move(f);
      return;
    } else {
      emplace_new<D>(std::forward<F>(f));
    }
  }

  /// Calls the wrapped callable; it must not be empty.
  void operator()() { ops_->invoke(buf_); }
  /// Whether a callable is held.
  explicit operator bool() const { return ops_ != nullptr; }
  /// Destroys the held callable, leaving this empty.
  void reset() {
    if (ops_) {
      if (ops_->destroy) ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

 private:
  template <typename D, typename F>
  void emplace_new(F&& f) {
    reset();
    if constexpr (fits_inline<D>()) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
      ops_ = &kHeapOps<D>;
    }
  }

  // move and destroy are null for trivially copyable callables (most lambdas): a byte copy
  // moves them and nothing destroys them, which saves two indirect calls per event.
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* dst, void* src);  // move-constructs dst from src and destroys src
    void (*destroy)(void*);
  };
  void move_from(Callback& o) {
    if (ops_->move) {
      ops_->move(buf_, o.buf_);
    } else {
      std::memcpy(buf_, o.buf_, kInlineBytes);
    }
  }

  template <typename D>
  static constexpr bool fits_inline() {
    return sizeof(D) <= kInlineBytes && alignof(D) <= kAlign &&
           std::is_nothrow_move_constructible_v<D>;
  }

  template <typename D>
  static constexpr bool kTrivial = std::is_trivially_copyable_v<D>;
  template <typename D>
  static constexpr Ops kInlineOps = {
      [](void* p) { (*std::launder(static_cast<D*>(p)))(); },
      kTrivial<D> ? nullptr
                  : +[](void* dst, void* src) {
                      D* s = std::launder(static_cast<D*>(src));
                      ::new (dst) D(std::move(*s));
                      s->~D();
                    },
      kTrivial<D> ? nullptr : +[](void* p) { std::launder(static_cast<D*>(p))->~D(); },
  };
  template <typename D>
  static constexpr Ops kHeapOps = {
      [](void* p) { (**static_cast<D**>(p))(); },
      [](void* dst, void* src) { *static_cast<D**>(dst) = *static_cast<D**>(src); },
      [](void* p) { delete *static_cast<D**>(p); },
  };

  alignas(kAlign) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace ridge::sim
