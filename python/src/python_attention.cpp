#include "python_attention.h"

#include "harness/records.h"

#include <pthread.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace nb = nanobind;

namespace flashproof::python {
namespace {

// The tensor's elements in logical (row-major) order as raw bit patterns, native byte order.
nb::bytes tensor_bytes(const HostTensor& t) {
  const std::size_t width = static_cast<std::size_t>(dtype_bytes(t.dtype()));
  std::string buffer(static_cast<std::size_t>(t.numel()) * width, '\0');
  t.for_each_bits([&](std::size_t x, std::uint32_t bits) {
    if (width == 4) {
      std::memcpy(buffer.data() + x * 4, &bits, 4);
    } else {
      const auto half = static_cast<std::uint16_t>(bits);
      std::memcpy(buffer.data() + x * 2, &half, 2);
    }
  });
  return nb::bytes(buffer.data(), buffer.size());
}

// Copies bit patterns in logical order into the (possibly strided) output view, element by element,
// so nothing outside the view is touched.
void write_bytes(HostTensor& t, nb::handle data, const std::string& what) {
  if (!nb::isinstance<nb::bytes>(data))
    throw std::invalid_argument(what + ": the runner returned no bytes (internal error)");
  const nb::bytes b = nb::borrow<nb::bytes>(data);
  const std::size_t width = static_cast<std::size_t>(dtype_bytes(t.dtype()));
  if (b.size() != static_cast<std::size_t>(t.numel()) * width)
    throw std::invalid_argument(what + ": " + std::to_string(b.size()) + " bytes returned, expected " +
                                std::to_string(t.numel() * static_cast<std::int64_t>(width)));
  const char* src = static_cast<const char*>(b.data());
  const Shape& s = t.shape();
  std::size_t x = 0;
  for (std::int64_t i0 = 0; i0 < s[0]; ++i0)
    for (std::int64_t i1 = 0; i1 < s[1]; ++i1)
      for (std::int64_t i2 = 0; i2 < s[2]; ++i2)
        for (std::int64_t i3 = 0; i3 < s[3]; ++i3, ++x) {
          std::uint32_t bits = 0;
          if (width == 4) {
            std::memcpy(&bits, src + x * 4, 4);
          } else {
            std::uint16_t half;
            std::memcpy(&half, src + x * 2, 2);
            bits = half;
          }
          t.set_bits(i0, i1, i2, i3, bits);
        }
}

// The problem's record (harness/records.h) as a dict: integers, strings, numbers, null and the
// arrays (as lists): a packed batch's offsets, ALiBi's slopes.
nb::dict params_of(const Problem& p) {
  nb::dict d;
  const json::Value record(p);
  for (const auto& [key, value] : record.items()) {
    if (value.is_array()) {
      nb::list items;
      for (const json::Value& x : value) {  // offsets are integers, ALiBi's slopes numbers
        if (x.is_number_integer())
          items.append(x.get<std::int64_t>());
        else
          items.append(x.get<double>());
      }
      d[key.c_str()] = items;
    } else if (value.is_number_integer())
      d[key.c_str()] = value.get<std::int64_t>();
    else if (value.is_number())
      d[key.c_str()] = value.get<double>();
    else if (value.is_string())
      d[key.c_str()] = value.get<std::string>();
    else
      d[key.c_str()] = nb::none();
  }
  return d;
}

// "TypeError: message" on one line (a campaign's crash record and run_check's error text).
std::string one_line(const nb::python_error& e) {
  std::string text;
  try {
    text = nb::cast<std::string>(nb::str(e.type().attr("__name__")));
    const std::string message = nb::cast<std::string>(nb::str(e.value()));
    if (!message.empty()) text += ": " + message;
  } catch (...) {
    text = "a Python exception";
  }
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

}  // namespace

PythonAttention::PythonAttention(PythonImplSettings settings, nb::object runner)
    : settings_(std::move(settings)), runner_(std::move(runner)) {}

void PythonAttention::rebind(PythonImplSettings settings, nb::object runner) {
  settings_ = std::move(settings);
  runner_ = std::move(runner);
}

Support PythonAttention::declared_support() const {
  Support s = settings_.support;
  s.backward = s.backward && settings_.has_backward;
  if (s.dtypes.empty()) s.dtypes = settings_.dtypes;
  return s;
}

std::exception_ptr PythonAttention::take_pending_error() { return std::exchange(pending_, nullptr); }

nb::object PythonAttention::call_runner(const char* direction, const Problem& p, nb::tuple inputs) {
  if (!runner_.is_valid()) throw std::runtime_error(settings_.name + ": its Python callables were released");
  try {
    return runner_(direction, params_of(p), inputs);
  } catch (nb::python_error& e) {
    const std::string line = one_line(e);
    const bool refused = e.matches(nb::module_::import_("flashproof._support").attr("Unsupported"));
    pending_ = std::current_exception();
    if (refused) throw RefusedAtRunTime(line);  // flashproof.Unsupported: unsupported, not a crash
    throw std::runtime_error(line);
  }
}

void PythonAttention::forward(const Problem& p, const ForwardArgs& a) {
  nb::gil_scoped_acquire gil;
  // Appended keys (a KV cache): the new keys after the cache, and the cache the callable left back.
  const nb::object out = call_runner(
      "forward", p,
      a.append != nullptr ? nb::make_tuple(tensor_bytes(a.q), tensor_bytes(a.k), tensor_bytes(a.v),
                                           tensor_bytes(a.append->k_new), tensor_bytes(a.append->v_new))
                          : nb::make_tuple(tensor_bytes(a.q), tensor_bytes(a.k), tensor_bytes(a.v)));
  write_bytes(a.o, out[0], "o");
  write_bytes(a.lse, out[1], "lse");
  if (a.append != nullptr) {
    write_bytes(a.append->k_cache, out[2], "k cache");
    write_bytes(a.append->v_cache, out[3], "v cache");
  }
}

void PythonAttention::backward(const Problem& p, const BackwardArgs& a) {
  nb::gil_scoped_acquire gil;
  const nb::object out = call_runner(
      "backward", p,
      nb::make_tuple(tensor_bytes(a.q), tensor_bytes(a.k), tensor_bytes(a.v), tensor_bytes(a.o),
                     tensor_bytes(a.lse), tensor_bytes(a.dout)));
  write_bytes(a.dq, out[0], "dq");
  write_bytes(a.dk, out[1], "dk");
  write_bytes(a.dv, out[2], "dv");
}

namespace {

std::atomic<int> g_fork_guards{0};

void before_fork() {
  if (g_fork_guards.load() > 0) PyOS_BeforeFork();
}
void after_fork_parent() {
  if (g_fork_guards.load() > 0) PyOS_AfterFork_Parent();
}
void after_fork_child() {
  if (g_fork_guards.load() > 0) PyOS_AfterFork_Child();
}

}  // namespace

ForkGuard::ForkGuard() {
  // pthread_atfork handlers cannot be removed: register them once, active only under a guard.
  static const int registered = ::pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  if (registered != 0) throw std::runtime_error("pthread_atfork failed");
  ++g_fork_guards;
}

ForkGuard::~ForkGuard() { --g_fork_guards; }

}  // namespace flashproof::python
