/*
 * drop.h - the drop-reason enum and its names, generated from
 * drop_reasons.def. Owns nothing else; counters live with each worker.
 */
#ifndef LUNAR_BASE_DROP_H
#define LUNAR_BASE_DROP_H

enum lunar_drop {
	LUNAR_DROP_NONE = 0, /* not dropped: parsing succeeded */
#define X(name, desc) LUNAR_DROP_##name,
#include "base/drop_reasons.def"
#undef X
	LUNAR_DROP_COUNT
};

/** @return the reason's short name, e.g. "IP_BAD_CHECKSUM" ("?" if out of range). */
const char *lunar_drop_name(enum lunar_drop reason);
/** @return the reason's one-line description. */
const char *lunar_drop_desc(enum lunar_drop reason);

#endif
