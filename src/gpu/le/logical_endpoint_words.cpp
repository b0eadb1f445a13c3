#include "gpu/le/logical_endpoint_words.hpp"

namespace cumemctl::gpu {

const std::string& LeNames::of(LeProperty property) const {
    switch (property) {
        case LeProperty::endpoint_size:
            return endpoint_size;
        case LeProperty::offset:
            return offset;
        case LeProperty::mem_offset:
            return mem_offset;
        case LeProperty::bind_size:
            return bind_size;
        case LeProperty::location:
            return location;
        case LeProperty::handle_type:
            return handle_type;
        case LeProperty::counted_ops:
            return counted_ops;
        case LeProperty::by_address:
            return by_address;
        case LeProperty::limits_only:
            return limits_only;
        case LeProperty::timeout:
            return timeout;
        case LeProperty::devices:
            return devices;
    }
    return endpoint_size;
}

}  // namespace cumemctl::gpu
