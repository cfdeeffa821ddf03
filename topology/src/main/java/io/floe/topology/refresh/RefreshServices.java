package io.floe.topology.refresh;

import io.floe.topology.iceberg.ManifestWork;
import io.floe.topology.refresh.eval.join.DimensionTables;
import io.floe.topology.view.CompiledView;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

/**
 * What every refresh of one {@link ViewRefresher} works with, handed as one value from the
 * refresher to each {@link RefreshRun}.
 *
 * @param hooks points where tests stop the process
 * @param inForce whether a definition is still the one in force, asked before every commit
 * @param scanThreads where a recompute runs the workers that read and aggregate its files beside
 *     the refreshing thread
 * @param manifests where scans and commits read and write their manifests
 * @param dimensionTables the hash tables of the dimensions that views join, shared by every refresh
 */
record RefreshServices(
    RefreshHooks hooks,
    Predicate<CompiledView> inForce,
    Executor scanThreads,
    ManifestWork manifests,
    DimensionTables dimensionTables) {}
