/**
 * @file visibility.h
 * @brief CUMPI_PUBLIC marks what libcumpi exports (it is built with hidden
 *        visibility and a version script).
 */
#ifndef CUMPI_VISIBILITY_H
#define CUMPI_VISIBILITY_H

#ifndef CUMPI_PUBLIC
#define CUMPI_PUBLIC __attribute__((visibility("default")))
#endif

#endif /* CUMPI_VISIBILITY_H */
