// One copy of each value alike, shared by whoever holds it and freed when no one does: a fleet's nodes
// say the same things (a reason, a GPU model's capabilities, a driver's properties), so each node holds
// a pointer, not a copy; and a report that is read and then replaced (a newer one of its node, or one
// that does not decide) leaves nothing behind, so that memory follows what the summary keeps, not what
// was read.
#pragma once

#include <map>
#include <memory>
#include <mutex>

namespace cumemctl::fleet {

// The one live copy of a value equal to `value` (by T's operator<), made from it where none is.
template <class T>
std::shared_ptr<const T> interned(T value) {
    struct ByValue {
        bool operator()(const T* a, const T* b) const { return *a < *b; }
    };
    // Every key is a live value: a value's deleter takes its entry out before the value goes.
    struct Pool {
        std::mutex lock;
        std::map<const T*, std::weak_ptr<const T>, ByValue> values;
    };
    static Pool* const pool = new Pool;  // never destroyed: a value may outlive static destruction
    struct Release {
        void operator()(const T* v) const {
            {
                const std::lock_guard<std::mutex> held(pool->lock);
                // An equal value made since this one's count reached zero keeps its entry.
                if (const auto it = pool->values.find(v); it != pool->values.end() && it->first == v)
                    pool->values.erase(it);
            }
            delete v;
        }
    };
    // Made before the lock is taken, and so let go after it is released: its release takes the lock
    // (where an allocation below fails, or an equal value is alive already).
    std::shared_ptr<const T> made(new T(std::move(value)), Release{});
    const std::lock_guard<std::mutex> held(pool->lock);
    if (const auto it = pool->values.find(made.get()); it != pool->values.end()) {
        if (auto alive = it->second.lock()) return alive;
        pool->values.erase(it);  // its last holder let go; its deleter waits for the lock
    }
    pool->values.emplace(made.get(), made);
    return made;
}

}  // namespace cumemctl::fleet
