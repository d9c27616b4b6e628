// ThreadSanitizer's view of Debian's Abseil locks, for `--config=tsan` only.
//
// Debian's libabsl_synchronization is not built with -fsanitize=thread, so
// TSan cannot see an absl::Mutex being taken or released, nor an
// absl::Notification being notified: every hand-off through one looks like a
// data race, and a real race on a guarded field looks no different. Abseil's
// own TSan build fixes this by calling TSan's mutex annotations inside the
// library; this file does the same from outside it.
//
// How: it defines the out-of-line members of absl::Mutex, absl::CondVar,
// absl::Notification and absl::ReleasableMutexLock. Linked into an executable
// (under --config=tsan, //core/platform depends on it, everything links
// statically, and -rdynamic exports it), these definitions interpose on the
// shared library's: calls from our code and from gRPC's and Abseil's own
// shared libraries land here. Each one tells TSan what the call means
// (__tsan_mutex_pre_lock/post_lock, ...) and calls the library's own
// function, found with dlsym(RTLD_NEXT). Waits that release the lock (Await,
// CondVar::Wait) are "unlock, then lock again"; the conditions Abseil
// evaluates inside a call run with TSan's access checks off, as Abseil's own
// annotations leave them.
//
// Nothing here is compiled into the default, asan or opt builds.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/config.h"
#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

#if !defined(ABSL_HAVE_THREAD_SANITIZER)
#error "tsan_abseil_sync.cc is only for -fsanitize=thread builds (--config=tsan)"
#endif

namespace {

#define TG_STRINGIFY_INNER(x) #x
#define TG_STRINGIFY(x) TG_STRINGIFY_INNER(x)

// The library's own definition of a member: `member` is its mangled name
// after absl::<inline namespace>:: ("5Mutex4LockEv"), `qualifier` "K" for a
// const member. Looked up past this executable, i.e. in libabsl_*.so.
void* Real(const char* qualifier, const char* member) {
  const std::string ns = TG_STRINGIFY(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name =
      std::string("_ZN") + qualifier + "4absl" + std::to_string(ns.size()) + ns + member;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_abseil_sync: %s not found: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return fn;
}

#define TG_REAL(type, member) reinterpret_cast<type>(Real("", member))
#define TG_REAL_CONST(type, member) reinterpret_cast<type>(Real("K", member))

// Abseil's calls into its own exported functions (Notification's wait takes
// its mutex with LockWhen; CondVar and Barrier lock theirs) may come back
// through these definitions. Only the outermost call on a thread is
// annotated: an inner one is part of the outer operation, which already says
// what it means.
thread_local int depth = 0;

class Outermost {
 public:
  Outermost() : outermost_(depth++ == 0) {}
  ~Outermost() { --depth; }
  bool operator()() const { return outermost_; }

 private:
  const bool outermost_;
};

constexpr unsigned kRead = __tsan_mutex_read_lock;

// The mutex is released, then taken again: Await, LockWhen's wait, CondVar.
void AnnotateUnlock(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags);
  __tsan_mutex_post_unlock(mu, flags);
}

bool AnnotatedTryLock(absl::Mutex* mu, bool (*real)(absl::Mutex*), unsigned flags) {
  Outermost outer;
  if (!outer()) return real(mu);
  __tsan_mutex_pre_lock(mu, flags | __tsan_mutex_try_lock);
  const bool locked = real(mu);
  __tsan_mutex_post_lock(mu, flags | __tsan_mutex_try_lock |
                                 (locked ? 0 : __tsan_mutex_try_lock_failed), 0);
  return locked;
}

// Calls `real` (a lock or wait that returns with `mu` held) as one lock
// operation; with `held`, `mu` is released first (Await, CondVar::Wait).
template <typename Fn>
auto AnnotatedLockCall(absl::Mutex* mu, unsigned flags, bool held, Fn real) {
  Outermost outer;
  if (outer()) {
    if (held) AnnotateUnlock(mu, flags);
    __tsan_mutex_pre_lock(mu, flags);
  }
  auto result = real();
  if (outer()) __tsan_mutex_post_lock(mu, flags, 0);
  return result;
}

// Whether `pc` lies in the executable, i.e. in instrumented code (tensorgrid
// links statically under --config=tsan), rather than in a shared library
// such as libgrpc.
bool InExecutable(const void* pc) {
  static const void* const executable = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&InExecutable), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  Dl_info info{};
  return dladdr(pc, &info) != 0 && info.dli_fbase == executable;
}

bool AnnotatedWait(const std::atomic<bool>* flag, bool notified) {
  if (notified) __tsan_acquire(const_cast<std::atomic<bool>*>(flag));
  return notified;
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

// A destroy is checked against the mutex's last unlock. A mutex that gRPC
// destroys (a channel's, its thread pool's) reached the destroying thread
// through gRPC's own atomics, which TSan cannot see: only destroys from our
// code are annotated.
Mutex::~Mutex() {
  static const auto real = TG_REAL(void (*)(Mutex*), "5MutexD2Ev");
  if (InExecutable(__builtin_return_address(0))) __tsan_mutex_destroy(this, 0);
  real(this);
}

void Mutex::Lock() {
  static const auto real = TG_REAL(void (*)(Mutex*), "5Mutex4LockEv");
  Outermost outer;
  if (outer()) __tsan_mutex_pre_lock(this, 0);
  real(this);
  if (outer()) __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::ReaderLock() {
  static const auto real = TG_REAL(void (*)(Mutex*), "5Mutex10ReaderLockEv");
  Outermost outer;
  if (outer()) __tsan_mutex_pre_lock(this, kRead);
  real(this);
  if (outer()) __tsan_mutex_post_lock(this, kRead, 0);
}

void Mutex::Unlock() {
  static const auto real = TG_REAL(void (*)(Mutex*), "5Mutex6UnlockEv");
  Outermost outer;
  if (outer()) __tsan_mutex_pre_unlock(this, 0);
  real(this);
  if (outer()) __tsan_mutex_post_unlock(this, 0);
}

void Mutex::ReaderUnlock() {
  static const auto real = TG_REAL(void (*)(Mutex*), "5Mutex12ReaderUnlockEv");
  Outermost outer;
  if (outer()) __tsan_mutex_pre_unlock(this, kRead);
  real(this);
  if (outer()) __tsan_mutex_post_unlock(this, kRead);
}

bool Mutex::TryLock() {
  static const auto real = TG_REAL(bool (*)(Mutex*), "5Mutex7TryLockEv");
  return AnnotatedTryLock(this, real, 0);
}

bool Mutex::ReaderTryLock() {
  static const auto real = TG_REAL(bool (*)(Mutex*), "5Mutex13ReaderTryLockEv");
  return AnnotatedTryLock(this, real, kRead);
}

void Mutex::Await(const Condition& cond) {
  static const auto real = TG_REAL(void (*)(Mutex*, const Condition&), "5Mutex5AwaitERKNS0_9ConditionE");
  AnnotatedLockCall(this, 0, true, [&] { real(this, cond); return 0; });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = TG_REAL(bool (*)(Mutex*, const Condition&, Duration),
                                   "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AnnotatedLockCall(this, 0, true, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = TG_REAL(bool (*)(Mutex*, const Condition&, Time),
                                   "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AnnotatedLockCall(this, 0, true, [&] { return real(this, cond, deadline); });
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real = TG_REAL(void (*)(Mutex*, const Condition&), "5Mutex8LockWhenERKNS0_9ConditionE");
  AnnotatedLockCall(this, 0, false, [&] { real(this, cond); return 0; });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real =
      TG_REAL(void (*)(Mutex*, const Condition&), "5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  AnnotatedLockCall(this, kRead, false, [&] { real(this, cond); return 0; });
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = TG_REAL(bool (*)(Mutex*, const Condition&, Duration),
                                   "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AnnotatedLockCall(this, 0, false, [&] { return real(this, cond, timeout); });
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real =
      TG_REAL(bool (*)(Mutex*, const Condition&, Duration),
              "5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return AnnotatedLockCall(this, kRead, false, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = TG_REAL(bool (*)(Mutex*, const Condition&, Time),
                                   "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AnnotatedLockCall(this, 0, false, [&] { return real(this, cond, deadline); });
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real =
      TG_REAL(bool (*)(Mutex*, const Condition&, Time),
              "5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return AnnotatedLockCall(this, kRead, false, [&] { return real(this, cond, deadline); });
}

// Fully defined here (Release is one unlock), so its unlock is annotated
// however the library binds its own call.
void ReleasableMutexLock::Release() {
  this->mu_->Unlock();
  this->mu_ = nullptr;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = TG_REAL(void (*)(CondVar*, Mutex*), "7CondVar4WaitEPNS0_5MutexE");
  AnnotatedLockCall(mu, 0, true, [&] { real(this, mu); return 0; });
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = TG_REAL(bool (*)(CondVar*, Mutex*, Duration),
                                   "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  return AnnotatedLockCall(mu, 0, true, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = TG_REAL(bool (*)(CondVar*, Mutex*, Time),
                                   "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  return AnnotatedLockCall(mu, 0, true, [&] { return real(this, mu, deadline); });
}

// A notification is a release by Notify and an acquire by every wait that
// sees it, on the flag HasBeenNotified (inline, so instrumented) reads too.
void Notification::Notify() {
  static const auto real = TG_REAL(void (*)(Notification*), "12Notification6NotifyEv");
  Outermost outer;
  if (outer()) __tsan_release(&notified_yet_);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real =
      TG_REAL_CONST(void (*)(const Notification*), "12Notification19WaitForNotificationEv");
  Outermost outer;
  real(this);
  if (outer()) AnnotatedWait(&notified_yet_, true);
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real =
      TG_REAL_CONST(bool (*)(const Notification*, Duration),
              "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  Outermost outer;
  const bool notified = real(this, timeout);
  return outer() ? AnnotatedWait(&notified_yet_, notified) : notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real =
      TG_REAL_CONST(bool (*)(const Notification*, Time),
              "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  Outermost outer;
  const bool notified = real(this, deadline);
  return outer() ? AnnotatedWait(&notified_yet_, notified) : notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
