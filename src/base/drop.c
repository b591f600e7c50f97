/* drop.c - names and descriptions of drop reasons (from drop_reasons.def). */
#include "base/drop.h"

static const char *const drop_names[LUNAR_DROP_COUNT] = {
    [LUNAR_DROP_NONE] = "NONE",
#define X(name, desc) [LUNAR_DROP_##name] = #name,
#include "base/drop_reasons.def"
#undef X
};

static const char *const drop_descs[LUNAR_DROP_COUNT] = {
    [LUNAR_DROP_NONE] = "not dropped",
#define X(name, desc) [LUNAR_DROP_##name] = desc,
#include "base/drop_reasons.def"
#undef X
};

const char *lunar_drop_name(enum lunar_drop reason)
{
	return (unsigned)reason < LUNAR_DROP_COUNT ? drop_names[reason] : "?";
}

const char *lunar_drop_desc(enum lunar_drop reason)
{
	return (unsigned)reason < LUNAR_DROP_COUNT ? drop_descs[reason] : "?";
}
