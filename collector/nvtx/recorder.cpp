#include "nvtx/recorder.h"

#include <cstring>

#include "base/clock.h"
#include "nvtx/handlers.h"
#include "nvtx/names.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::nvtx {

namespace tr = gprof::trace;

void Recorder::hook(void* ctx, tr::TraceWriter& writer, bool final) {
    static_cast<Recorder*>(ctx)->drain(writer, final);
}

bool Recorder::in_window(tr::Timestamp t) const {
    if (options_.window_start && t < options_.window_start) return false;
    if (options_.window_end && t >= options_.window_end) return false;
    return true;
}

tr::StringId Recorder::domain_string(uint32_t domain, tr::TraceWriter& writer) {
    if (domain == 0) return 0;
    auto it = domain_ids_.find(domain);
    if (it != domain_ids_.end()) return it->second;
    if (!names().domain_name(domain, scratch_)) scratch_ = "<domain " + std::to_string(domain) + ">";
    tr::StringId id = writer.intern(scratch_.data(), scratch_.size());
    domain_ids_.emplace(domain, id);
    return id;
}

tr::StringId Recorder::registered_string(uint32_t sid, tr::TraceWriter& writer) {
    auto it = registered_ids_.find(sid);
    if (it != registered_ids_.end()) return it->second;
    if (!names().string_text(sid, scratch_)) scratch_.clear();
    tr::StringId id = writer.intern(scratch_.data(), scratch_.size());
    registered_ids_.emplace(sid, id);
    return id;
}

tr::StringId Recorder::category_string(uint32_t domain, uint32_t category, tr::TraceWriter& writer) {
    if (category == 0) return 0;
    uint64_t version = names().category_version();
    if (version != category_version_) {
        category_ids_.clear();  // a category was (re)named since: look again
        category_version_ = version;
    }
    uint64_t key = (static_cast<uint64_t>(domain) << 32) | category;
    auto it = category_ids_.find(key);
    if (it != category_ids_.end()) return it->second;
    tr::StringId id = 0;
    if (names().category_name(domain, category, scratch_)) id = writer.intern(scratch_.data(), scratch_.size());
    category_ids_.emplace(key, id);
    return id;
}

tr::StringId Recorder::name_id(const char* name, size_t length, tr::TraceWriter& writer) {
    if (length == 0 || length > sizeof(NameSlot::words)) return writer.intern(name, length);
    if (names_writer_ != &writer) {
        name_slots_.assign(kNameSlots, NameSlot{});
        names_writer_ = &writer;
    }
    // The name lies in an event, padded to 8 bytes: read it as whole words, the last one masked to the name's length.
    // (A memcpy of `length` bytes into a word compiled to byte stores and a wide load, which stalled on store
    // forwarding: it was the largest cost per range, measured.) Every word goes into the hash: names often differ
    // only in the middle ("forward/layer3/attention").
    size_t n = (length + 7) / 8;
    uint64_t last_mask = length % 8 ? (uint64_t(1) << (8 * (length % 8))) - 1 : ~uint64_t(0);
    auto word = [&](size_t i) {  // fixed-size loads: no byte-wise copy to forward from
        uint64_t w;
        std::memcpy(&w, name + 8 * i, 8);
        return i + 1 == n ? w & last_mask : w;
    };
    uint64_t h = length * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; ++i) {
        h = (h ^ word(i)) * 0xC2B2AE3D27D4EB4Full;
        h ^= h >> 29;
    }
    NameSlot& slot = name_slots_[h & (kNameSlots - 1)];
    if (slot.length == length) {
        bool same = true;
        for (size_t i = 0; i < n; ++i) same &= slot.words[i] == word(i);
        if (same) return slot.id;
    }
    tr::StringId id = writer.intern(name, length);
    if (id != 0) {
        slot.length = static_cast<uint32_t>(length);
        slot.id = id;
        for (size_t i = 0; i < n; ++i) slot.words[i] = word(i);
    }
    return id;
}

void Recorder::write_range(tr::TraceWriter& writer, const tr::Nvtx& range) {
    if (!in_window(range.start)) return;
    writer.add(range);
    ++ranges_written_;
}

// A pop: the innermost open push of its stack ends at `end` and is written; no push open (or no stack for its
// domain) is a pop without a push, counted.
inline void Recorder::pop_range(std::vector<tr::Nvtx>* stack, tr::Timestamp end, tr::TraceWriter& writer) {
    if (!stack || stack->empty()) {
        ++overflow_;  // pop without push
        return;
    }
    stack->back().end = end;
    write_range(writer, stack->back());
    stack->pop_back();
}

void Recorder::on_event(ThreadStream* s, StreamState& st, const uint8_t* event, tr::TraceWriter& writer) {
    const auto* h = reinterpret_cast<const EventHeader*>(event);
    const uint8_t* q = event + sizeof(EventHeader);
    const EventAttrs* attrs = nullptr;
    if (h->flags & kHasAttrs) {
        attrs = reinterpret_cast<const EventAttrs*>(q);
        q += sizeof(EventAttrs);
    }
    uint64_t range_id = 0;
    if (h->flags & kHasRangeId) {
        std::memcpy(&range_id, q, 8);
        q += 8;
    }
    const char* name = reinterpret_cast<const char*>(q);
    size_t name_len = h->name_len;

    // Fills a record in place (a push is built straight into its stack: building it aside and copying it in stalled on
    // store forwarding, measured).
    auto fill = [&](tr::Nvtx& r, tr::NvtxType type) __attribute__((always_inline)) {  // r: default-constructed
        r.type = type;
        r.start = h->timestamp;
        r.tid = s->tid;
        r.end_tid = s->tid;
        r.domain = h->domain == 0 ? 0 : domain_string(h->domain, writer);  // the default domain: no call
        if (attrs && (h->flags & kRegistered)) r.name = registered_string(attrs->registered, writer);
        else r.name = name_id(name, name_len, writer);
        if (attrs) {
            r.color = attrs->color;
            r.category = attrs->category;
            r.category_name = category_string(h->domain, attrs->category, writer);
            r.payload = attrs->payload;
            r.payload_type = static_cast<tr::NvtxPayload>(attrs->payload_type);
        }
    };
    auto make = [&](tr::NvtxType type) {
        tr::Nvtx r;
        fill(r, type);
        return r;
    };

    switch (h->type) {
    case EventType::Push: {
        auto& stack = st.stack(h->domain);
        uint16_t depth = static_cast<uint16_t>(stack.size() > 0xFFFF ? 0xFFFF : stack.size());
        tr::Nvtx& o = stack.emplace_back();
        fill(o, tr::NvtxType::PushPop);
        o.depth = depth;
        break;
    }
    case EventType::Pop: {
        std::vector<tr::Nvtx>* stack = &st.default_stack;
        if (h->domain != 0) {
            auto it = st.stacks.find(h->domain);
            stack = it == st.stacks.end() ? nullptr : &it->second;
        }
        pop_range(stack, h->timestamp, writer);
        break;
    }
    case EventType::Start: {
        tr::Nvtx o = make(tr::NvtxType::StartEnd);
        auto pending = pending_ends_.find(range_id);
        if (pending != pending_ends_.end()) {
            o.end = pending->second.timestamp;
            o.end_tid = pending->second.tid;
            pending_ends_.erase(pending);
            write_range(writer, o);
        } else {
            open_starts_[range_id] = o;
        }
        break;
    }
    case EventType::End: {
        auto it = open_starts_.find(range_id);
        if (it == open_starts_.end()) {
            // Its start sits in a stream not read yet this round (or never existed): keep it for later.
            pending_ends_[range_id] = PendingEnd{h->timestamp, s->tid};
            break;
        }
        tr::Nvtx o = it->second;
        open_starts_.erase(it);
        o.end = h->timestamp;
        o.end_tid = s->tid;
        write_range(writer, o);
        break;
    }
    case EventType::Mark: {
        tr::Nvtx o = make(tr::NvtxType::Mark);
        o.end = o.start;
        write_range(writer, o);
        break;
    }
    case EventType::ShortPop: break;  // 8 bytes, not a header: drain() handles it before calling here
    }
}

void Recorder::retire(ThreadStream* s) {
    uint64_t late = s->after_end.load(std::memory_order_relaxed);
    retired_after_end_ += late;
    retired_threads_after_end_ += late > 0;
    states_.erase(s);
    free_stream(s);
}

void Recorder::say_not_recorded_at_end(tr::TraceWriter& writer) {
    // What the program's threads did after the process began to end: real events, left out so that the end is
    // bounded (the last drain reads only what was there). Not "dropped": they were never recorded, by design.
    uint64_t events = retired_after_end_, threads = retired_threads_after_end_;
    for (ThreadStream* s = streams(); s; s = s->next_stream) {
        uint64_t n = s->after_end.load(std::memory_order_relaxed);
        events += n;
        threads += n > 0;
    }
    if (events == 0) return;
    Ending why = ending();
    std::string text = std::to_string(events) + " NVTX events from " + std::to_string(threads) +
                       (threads == 1 ? " thread" : " threads") + " not recorded: they came after the process began to " +
                       (why == Ending::Exec ? "exec" : why == Ending::Signal ? "end by a signal" : "exit") +
                       " (counted until the trace ended)";
    write_status(writer, tr::Component::Collector, tr::StatusLevel::Info, text);
}

void Recorder::drain(tr::TraceWriter& writer, bool final) {
    ThreadStream* prev = nullptr;  // the last stream kept in the list
    for (ThreadStream *s = streams(), *next = nullptr; s; s = next) {
        next = s->next_stream;
        if (s->finished) {
            // A thread that has ended and whose events are all written: its stream is freed, so that a program
            // starting threads for ever (a thread per request) holds no memory per thread it ever had. Only this
            // thread changes `next_stream` of a published stream; the head is left to the producers' pushes.
            if (prev) {
                prev->next_stream = next;
                retire(s);
            } else {
                prev = s;
            }
            continue;
        }
        prev = s;
        auto [it, inserted] = states_.try_emplace(s);
        StreamState& st = it->second;
        if (inserted) new_threads_.push_back(s->tid);
        // Read `exited` before the events: everything the thread wrote precedes its exit flag.
        bool exited = s->exited.load(std::memory_order_acquire);
        consume(s, [&](ThreadStream* stream, const uint8_t* event) {
            // A plain push or pop (default domain, no attributes: what a tight nvtxRangePushA/Pop loop writes) is
            // handled here, inline in the walk; everything else, and a pop without a push, goes to on_event.
            // (on_event's frame and its general record filling were a third of the writer's time per range.)
            const auto* h = reinterpret_cast<const EventHeader*>(event);
            if (h->type == EventType::ShortPop) [[likely]] {
                pop_range(&st.default_stack, short_pop_timestamp(event), writer);
                return;
            }
            if (h->flags == 0 && h->domain == 0) [[likely]] {
                auto& stack = st.default_stack;
                if (h->type == EventType::Pop) {
                    pop_range(&stack, h->timestamp, writer);
                    return;
                }
                if (h->type == EventType::Push) {
                    uint16_t depth = static_cast<uint16_t>(stack.size() > 0xFFFF ? 0xFFFF : stack.size());
                    tr::Nvtx& o = stack.emplace_back();
                    o.type = tr::NvtxType::PushPop;
                    o.start = h->timestamp;
                    o.tid = stream->tid;
                    o.end_tid = stream->tid;
                    o.name = name_id(reinterpret_cast<const char*>(event + sizeof(EventHeader)), h->name_len, writer);
                    o.depth = depth;
                    return;
                }
            }
            on_event(stream, st, event, writer);
        });
        uint64_t dropped = s->dropped.load(std::memory_order_relaxed);
        if (dropped > st.dropped_reported) {
            tr::Dropped d;
            d.timestamp = clock::now();
            d.count = dropped - st.dropped_reported;
            d.source = tr::DropSource::CollectorQueue;
            writer.add(d);
            st.dropped_reported = dropped;
        }
        if (exited && s->head && !s->head->next.load(std::memory_order_acquire) &&
            s->read == s->head->committed.load(std::memory_order_acquire)) {
            // Pushes of a thread that has ended can never be popped: close them out now.
            st.for_each_stack([&](std::vector<tr::Nvtx>& stack) {
                for (auto& o : stack) {
                    write_range(writer, o);
                    ++overflow_;
                }
                stack.clear();
            });
            free_block(s->head);
            s->head = nullptr;
            s->finished = true;
            if (s->exit_name[0]) ended_threads_.emplace_back(s->tid, std::string(s->exit_name));
        }
    }
    if (final) {
        // Ranges still open: written with end = 0 ("never ended") and counted.
        for (auto& [stream, st] : states_) {
            st.for_each_stack([&](std::vector<tr::Nvtx>& stack) {
                for (auto& o : stack) {
                    write_range(writer, o);
                    ++overflow_;
                }
                stack.clear();
            });
        }
        for (auto& [id, o] : open_starts_) {
            write_range(writer, o);
            ++overflow_;
        }
        open_starts_.clear();
        overflow_ += pending_ends_.size();
        pending_ends_.clear();
        say_not_recorded_at_end(writer);
    }
    if (overflow_ > 0) {
        tr::Dropped d;
        d.timestamp = clock::now();
        d.count = overflow_;
        d.source = tr::DropSource::NvtxOverflow;
        writer.add(d);
        overflow_ = 0;
    }
}

}  // namespace gprof::collector::nvtx
